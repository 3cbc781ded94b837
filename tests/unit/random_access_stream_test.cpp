// SPDX-License-Identifier: MIT
// HPCC RandomAccess's stream: starts(n), the n-th value by squaring, agrees with n steps of the
// generator from 1, for small n and across jumps at large n (what each PE's start relies on).
#include "random_access/random_access.hpp"

#include <gtest/gtest.h>

#include <cstdint>

namespace ra = mailroom::apps::random_access;

namespace {

TEST(RandomAccessStream, StartsIsTheNthStep) {
  std::uint64_t x = 1;
  for (std::int64_t n = 0; n < 5000; ++n) {
    ASSERT_EQ(ra::starts(n), x) << "n " << n;
    x = ra::next(x);
  }
}

TEST(RandomAccessStream, StartsJumpsAnywhere) {
  // Far into the stream, 1,000 steps from starts(n) land on starts(n + 1000).
  for (const std::int64_t n : {std::int64_t{1} << 20, (std::int64_t{1} << 40) + 12345,
                               ra::k_period - 2000, std::int64_t{987654321987654}}) {
    std::uint64_t x = ra::starts(n);
    for (int k = 0; k < 1000; ++k) x = ra::next(x);
    EXPECT_EQ(x, ra::starts(n + 1000)) << "n " << n;
  }
  // Negative positions count back from the period.
  EXPECT_EQ(ra::starts(-5), ra::starts(ra::k_period - 5));
}

TEST(RandomAccessStream, TheTopBitFoldsInThePolynomial) {
  EXPECT_EQ(ra::next(std::uint64_t{1} << 63), ra::k_poly);
  EXPECT_EQ(ra::next(3), 6u);
}

}  // namespace
