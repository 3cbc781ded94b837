// SPDX-License-Identifier: MIT
// How a reduction of the public collectives (and a one-sided atomic) reaches the transport: the
// element type and the operation when MPI knows both (then MPI's own reduction runs), and always a
// combining function (for the simulated machine, and for types and operations MPI does not know).
// Not API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace mailroom::detail {

/// Element types MPI reduces natively; `bytes`: another trivially copyable type.
enum class elem_type : std::uint8_t { bytes, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 };
/// Operations MPI has built in; `custom`: only `combine` knows it.
enum class reduce_kind : std::uint8_t { custom, sum, prod, min, max, band, bor, bxor };

/// T's element type: MPI's own for arithmetic types, else bytes.
template <class T>
constexpr elem_type elem_type_of() {
  if constexpr (std::is_same_v<T, float>) return elem_type::f32;
  if constexpr (std::is_same_v<T, double>) return elem_type::f64;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    constexpr bool s = std::is_signed_v<T>;
    switch (sizeof(T)) {
      case 1:
        return s ? elem_type::i8 : elem_type::u8;
      case 2:
        return s ? elem_type::i16 : elem_type::u16;
      case 4:
        return s ? elem_type::i32 : elem_type::u32;
      case 8:
        return s ? elem_type::i64 : elem_type::u64;
      default:
        break;
    }
  }
  return elem_type::bytes;
}

/// Read-modify-write operations of the one-sided atomics.
enum class atomic_op : std::uint8_t { add, band, bor, bxor, swap, load, compare_swap };

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
