// SPDX-License-Identifier: MIT
// The non-blocking one-sided operations to PEs reached through the transport: each is a request
// that the progress engine completes, and its future.
#include "mailroom/symmetric.hpp"

#include "pgas/one_sided.hpp"
#include "pgas/pending.hpp"

namespace mailroom::detail {

future<void> symmetric_get_async(int pe, const void* p, void* out, std::size_t bytes) {
  const runtime_turn turn;
  return track(symmetric_start_get(pe, p, out, bytes),
               {"get", "of {} bytes from PE {}", bytes, static_cast<std::uint64_t>(pe)});
}

future<void> symmetric_put_async(int pe, void* p, const void* in, std::size_t bytes) {
  const runtime_turn turn;
  return track(symmetric_start_put(pe, p, in, bytes),
               {"put", "of {} bytes to PE {}", bytes, static_cast<std::uint64_t>(pe)});
}

future<std::uint64_t> symmetric_atomic_async(int pe, void* p, elem_type type, atomic_op op,
                                             std::uint64_t operand, std::uint64_t compare) {
  const runtime_turn turn;
  auto result = std::make_shared<std::uint64_t>(0);
  return track(symmetric_start_atomic(pe, p, type, op, operand, compare, result.get()),
               {"atomic", "on PE {}", static_cast<std::uint64_t>(pe)})
      .then([result] { return *result; });
}

}  // namespace mailroom::detail
