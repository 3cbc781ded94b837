// SPDX-License-Identifier: MIT
// Division of a global index by a divisor fixed beforehand (a PE count, a block length) with a
// multiply and shifts: the distributions' (distribution.hpp).
#pragma once
#include <algorithm>
#include <cstdint>

namespace mailroom::detail {

/// Division of an index 0 <= n < 2^63 by a divisor 1 <= d < 2^63 fixed beforehand, with a
/// multiply and a shift where the CPU's divide takes tens of cycles: m = ceil(2^(63+l) / d) with
/// 2^l >= d is exact for 63-bit n (Granlund and Montgomery, 1994) and fits in 64 bits, and
/// n * m >> (63 + l) is the product's high word shifted by s = l - 1 (d > 1; d = 1 is m = 0). The
/// distributions keep m and s beside their other words (a closure that captures one compares
/// every word per send).
struct index_magic {
  std::uint64_t m = 0;  // 0: d = 1
  std::uint32_t s = 0;  // l - 1
};
[[nodiscard]] inline index_magic index_magic_for(std::int64_t d) noexcept {
  __extension__ using u128 = unsigned __int128;
  const auto u = static_cast<std::uint64_t>(std::max<std::int64_t>(d, 1));
  if (u == 1) return {};
  std::uint32_t l = 1;
  while ((std::uint64_t{1} << l) < u) ++l;
  return {static_cast<std::uint64_t>(((static_cast<u128>(1) << (63 + l)) + u - 1) / u), l - 1};
}
/// n / d, for 0 <= n < 2^63, with index_magic_for(d)'s m and s. (Not the low word shifted in
/// with the high one: SHRD made a memory-bound loop 20% slower than the divide on AMD's cores.)
[[nodiscard, gnu::always_inline]] inline std::int64_t index_quotient(std::int64_t n,
                                                                     std::uint64_t m,
                                                                     std::uint32_t s) noexcept {
  __extension__ using u128 = unsigned __int128;
  if (__builtin_expect(m == 0, 0)) return n;
  const u128 p = static_cast<u128>(static_cast<std::uint64_t>(n)) * m;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(p >> 64) >> s);
}

}  // namespace mailroom::detail
