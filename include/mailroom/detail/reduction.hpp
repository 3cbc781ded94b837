// How a reduction of the public collectives reaches the transport: the element type and the
// operation when MPI knows both (then MPI's own reduction runs), and always a combining function
// (for the simulated machine, and for types and operations MPI does not know). Not API.
#pragma once

#include <cstddef>
#include <cstdint>

namespace mailroom::detail {

/// Element types MPI reduces natively; `bytes`: another trivially copyable type.
enum class elem_type : std::uint8_t { bytes, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 };
/// Operations MPI has built in; `custom`: only `combine` knows it.
enum class reduce_kind : std::uint8_t { custom, sum, prod, min, max, band, bor, bxor };

/// inout[i] = in[i] op inout[i] for i < count (MPI's order: `in` comes from lower ranks).
using combine_fn = void (*)(const void* in, void* inout, std::size_t count, const void* ctx);

struct reduction {
  elem_type type = elem_type::bytes;
  reduce_kind kind = reduce_kind::custom;
  std::size_t elem_bytes = 0;
  combine_fn combine = nullptr;
  const void* ctx = nullptr;  ///< the operation object `combine` applies
  /// Whether MPI's built-in reduction applies (both known to it).
  [[nodiscard]] bool builtin() const noexcept {
    return type != elem_type::bytes && kind != reduce_kind::custom;
  }
};

}  // namespace mailroom::detail
