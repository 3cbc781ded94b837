// SPDX-License-Identifier: MIT
// The registry of mailbox signatures: what a signature stands for (the types, at static
// initialisation; the construction sites, as they are constructed), to name both PEs' views when
// a buffer arrives for a mailbox that is something else here.
#include "mailroom/detail/signature.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mailroom::detail {

namespace {
struct entry {
  const std::type_info* owner;
  std::vector<mailbox_kind> boxes;
};
// Function-local: registrations run during static initialisation, in any order.
std::unordered_map<std::uint32_t, entry>& registry() {
  static std::unordered_map<std::uint32_t, entry> r;
  return r;
}
// A construction site: as many as the program has lines that construct (a loop's constructions
// share one), so the table stays small however many selectors a program constructs.
struct site_entry {
  std::uint32_t type;
  const char* file;  // source_location's: static storage
  unsigned line, column;
  std::string names;
  std::vector<const std::type_info*> origins;  // per mailbox: a type-erased handler's own type
};
std::unordered_map<std::uint32_t, site_entry>& sites() {
  static std::unordered_map<std::uint32_t, site_entry> r;
  return r;
}

// FNV-1a, 32 bits: the same in every process of the program.
constexpr std::uint32_t k_fnv_basis = 2166136261u, k_fnv_prime = 16777619u;
std::uint32_t fnv(std::uint32_t h, std::string_view bytes) noexcept {
  for (const char c : bytes) h = (h ^ static_cast<unsigned char>(c)) * k_fnv_prime;
  return h;
}
std::uint32_t fnv(std::uint32_t h, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) h = (h ^ ((v >> (8 * i)) & 0xffu)) * k_fnv_prime;
  return h;
}
std::uint32_t without_index(std::uint32_t h) noexcept {
  h &= ~0xffu;
  return h == 0 ? 0x100 : h;  // 0 is no signature
}

std::string demangled(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  std::string s = status == 0 && name ? std::string(name.get()) : std::string(t.name());
  constexpr std::size_t k_most = 160;
  if (s.size() > k_most) s = s.substr(0, k_most - 3) + "...";
  return s;
}
}  // namespace

std::uint32_t register_signature(const std::type_info& owner, const mailbox_kind* boxes,
                                 std::size_t n) noexcept {
  // Of the mangled name: the same in every process of the program.
  const std::uint32_t h = without_index(fnv(k_fnv_basis, owner.name()));
  registry().try_emplace(h, entry{&owner, std::vector<mailbox_kind>(boxes, boxes + n)});
  return h;
}

std::uint32_t construction_signature(std::uint32_t type_signature, const source_location& site,
                                     std::initializer_list<std::string_view> names,
                                     std::initializer_list<const std::type_info*> origins) {
  std::uint32_t h = fnv(k_fnv_basis, type_signature);
  h = fnv(fnv(fnv(h, site.file_name()), site.line()), site.column());
  std::vector<const std::type_info*> erased;
  for (const std::type_info* o : origins) {
    h = fnv(fnv(h, o != nullptr ? o->name() : ""), 0xffu);
    erased.push_back(o);
  }
  std::string joined;
  for (const std::string_view n : names) {
    h = fnv(fnv(h, n), 0xffu);  // (a separator: "ab","" is not "a","b")
    if (n.empty()) continue;
    joined += joined.empty() ? "'" : ", '";
    joined += n;
    joined += "'";
  }
  h = without_index(h);
  sites().try_emplace(h, site_entry{type_signature, site.file_name(), site.line(), site.column(),
                                    joined, std::move(erased)});
  return h;
}

// The waves' signatures: low byte 0xfe, which no mailbox's has (a selector has fewer mailboxes).
constexpr std::uint32_t k_wave_tag = 0xfe;
std::unordered_map<std::uint32_t, std::string>& waves() {
  static std::unordered_map<std::uint32_t, std::string> r;
  return r;
}

std::uint32_t wave_signature(std::uint32_t key, const std::string& what) {
  const std::uint32_t h = without_index(fnv(fnv(k_fnv_basis, "waves"), key)) | k_wave_tag;
  waves().try_emplace(h, what);
  return h;
}

void forget_wave_signature(std::uint32_t signature) noexcept { waves().erase(signature); }

bool known_signature(std::uint32_t signature) {
  return waves().contains(signature) || sites().contains(signature & ~0xffu) ||
         registry().contains(signature & ~0xffu);
}

std::string describe_signature(std::uint32_t signature) {
  if (const auto w = waves().find(signature); w != waves().end()) return w->second;
  const std::size_t index = signature & 0xffu;
  if (const auto s = sites().find(signature & ~0xffu); s != sites().end()) {
    const site_entry& e = s->second;
    std::string where = e.column == 0 ? fmt::format("{}:{}", e.file, e.line)
                                      : fmt::format("{}:{}:{}", e.file, e.line, e.column);
    if (!e.names.empty()) where += fmt::format(" (mailboxes named {})", e.names);
    std::string made_of;
    if (index < e.origins.size() && e.origins[index] != nullptr)
      made_of = fmt::format(" made of `{}`", demangled(*e.origins[index]));
    return fmt::format("{}{}, constructed at {}", describe_signature(e.type | (signature & 0xffu)),
                       made_of, where);
  }
  const auto it = registry().find(signature & ~0xffu);
  if (it == registry().end() || index >= it->second.boxes.size())
    return fmt::format("an unknown mailbox (signature {:#x})", signature);
  const entry& e = it->second;
  const mailbox_kind& box = e.boxes[index];
  const std::string kind =
      demangled(*e.owner).starts_with("mailroom::conveyor<")
          ? "a conveyor"
          : fmt::format("mailbox {} of a selector of {}", index, e.boxes.size());
  if (box.message == nullptr) return fmt::format("{}: lambda messages", kind);
  return fmt::format("{}: message type `{}`, handler `{}`", kind, demangled(*box.message),
                     demangled(*box.handler));
}

}  // namespace mailroom::detail
