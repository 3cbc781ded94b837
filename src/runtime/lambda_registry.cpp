// SPDX-License-Identifier: MIT
// The lambda registry: collected at static initialisation, numbered and verified at start-up.
#include "mailroom/detail/lambda_registry.hpp"

#include "mailroom/error.hpp"
#include "transport/transport.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace mailroom::detail {

lambda_entry** g_lambda_table = nullptr;
std::uint32_t g_lambda_count = 0;

namespace {
std::vector<lambda_entry*>& registry() {
  static std::vector<lambda_entry*> r;  // constructed on first use: static-init order safe
  return r;
}

std::int64_t fnv1a(std::int64_t h, const void* p, std::size_t n) {
  auto x = static_cast<std::uint64_t>(h);
  const auto* b = static_cast<const unsigned char*>(p);
  for (std::size_t i = 0; i < n; ++i) x = (x ^ b[i]) * 1099511628211ull;
  return static_cast<std::int64_t>(x >> 1);
}
}  // namespace

std::size_t lambda_record_bytes(std::uint32_t id) noexcept {
  MAILROOM_CHECK(id < g_lambda_count,
                 "a lambda message with handler id {} arrived; this program "
                 "has {} (is every PE running the same binary?)",
                 id, g_lambda_count);
  return 8 * ((std::size_t{g_lambda_table[id]->size} + 7) / 8);
}

bool register_lambda(lambda_entry* e) noexcept {
  registry().push_back(e);
  return true;
}

void finalize_lambda_registry() {
  auto& r = registry();
  std::sort(r.begin(), r.end(), [](const lambda_entry* a, const lambda_entry* b) {
    return std::strcmp(a->name, b->name) < 0;
  });
  r.erase(std::unique(r.begin(), r.end()), r.end());
  std::int64_t h = static_cast<std::int64_t>(1469598103934665603ull >> 1);
  for (std::uint32_t i = 0; i < r.size(); ++i) {
    r[i]->wire_id = i;
    h = fnv1a(h, r[i]->name, std::strlen(r[i]->name));
    h = fnv1a(h, &r[i]->size, sizeof r[i]->size);
  }
  g_lambda_table = r.data();
  g_lambda_count = static_cast<std::uint32_t>(r.size());
  const auto lo = transport::allreduce_min(h), hi = transport::allreduce_max(h);
  MAILROOM_CHECK(lo == hi,
                 "the PEs disagree on the set of lambda message types ({} types here): every PE "
                 "must run the same binary",
                 r.size());
}

}  // namespace mailroom::detail
