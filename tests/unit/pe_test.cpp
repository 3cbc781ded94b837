// SPDX-License-Identifier: MIT
// mailroom::pe, the strong type for a PE id: construction, comparison, formatting, and that it
// does not silently convert to or from an int.
#include <mailroom/pe.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <compare>
#include <cstdint>
#include <map>
#include <ostream>
#include <type_traits>
#include <vector>

namespace mailroom {
// Readable GoogleTest failure messages (found by argument-dependent lookup).
void PrintTo(pe p, std::ostream* os) { *os << "pe(" << p.rank() << ")"; }
}  // namespace mailroom

namespace {

using mailroom::pe;

static_assert(std::is_trivially_copyable_v<pe>, "a pe travels inside messages");
static_assert(sizeof(pe) == sizeof(int));
static_assert(!std::is_convertible_v<int, pe>, "an int is not implicitly a pe");
static_assert(!std::is_convertible_v<pe, int>, "a pe is not implicitly an int");
static_assert(!std::is_constructible_v<pe, double>, "only integers name a PE");
static_assert(pe(7).rank() == 7, "usable in constant expressions");
static_assert(pe(1) < pe(2));

TEST(Pe, DefaultIsRankZero) { EXPECT_EQ(pe().rank(), 0); }

TEST(Pe, ConstructsFromAnyIntegerType) {
  EXPECT_EQ(pe(3).rank(), 3);
  EXPECT_EQ(pe(std::int64_t{5}).rank(), 5);
  EXPECT_EQ(pe(std::size_t{6}).rank(), 6);
  EXPECT_EQ(pe(std::uint16_t{65535}).rank(), 65535);
  EXPECT_EQ(pe(-1).rank(), -1);
}

TEST(Pe, ComparesLikeItsRank) {
  EXPECT_EQ(pe(2), pe(2));
  EXPECT_NE(pe(2), pe(3));
  EXPECT_LT(pe(2), pe(3));
  EXPECT_LE(pe(2), pe(2));
  EXPECT_GT(pe(4), pe(3));
  EXPECT_GE(pe(4), pe(4));
  EXPECT_FALSE(pe(3) < pe(3));
  EXPECT_TRUE(std::is_lt(pe(1) <=> pe(2)));
  EXPECT_TRUE(std::is_eq(pe(2) <=> pe(2)));
  EXPECT_TRUE(std::is_gt(pe(3) <=> pe(2)));
}

TEST(Pe, SortsAndKeysMaps) {
  std::vector<pe> v{pe(3), pe(0), pe(2), pe(1)};
  std::sort(v.begin(), v.end());
  EXPECT_EQ(v, (std::vector<pe>{pe(0), pe(1), pe(2), pe(3)}));
  std::map<pe, int> m{{pe(1), 10}, {pe(0), 20}};
  EXPECT_EQ(m.begin()->first, pe(0));
  EXPECT_EQ(m.at(pe(1)), 10);
}

TEST(Pe, FormatsAsItsRank) {
  EXPECT_EQ(fmt::format("{}", pe(3)), "3");
  EXPECT_EQ(fmt::format("{}", pe(0)), "0");
  EXPECT_EQ(fmt::format("PE {}", pe(12)), "PE 12");
  // The int format specification applies.
  EXPECT_EQ(fmt::format("{:>4}", pe(7)), "   7");
  EXPECT_EQ(fmt::format("{:03}", pe(7)), "007");
  EXPECT_EQ(fmt::format("{:x}", pe(255)), "ff");
}

}  // namespace
