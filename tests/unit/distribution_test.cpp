// SPDX-License-Identifier: MIT
// Distributions without a job (the PE count given): every global index has one owner and one
// local index, global() inverts them, and each PE's local indices are exactly [0, local_size).
#include <mailroom/distribution.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace mr = mailroom;

namespace {

// Checks d over P PEs: a bijection between [0, size) and the pairs (p, [0, local_size(p))).
template <class D>
void expect_bijection(const D& d, int P) {
  static_assert(mr::distribution<D>);
  std::vector<std::vector<int>> seen(static_cast<std::size_t>(P));
  std::int64_t total = 0;
  for (int p = 0; p < P; ++p) {
    seen[p].assign(mr::local_size(d, mr::pe(p)), 0);
    total += static_cast<std::int64_t>(seen[p].size());
  }
  ASSERT_EQ(total, d.size());
  for (std::int64_t g = 0; g < d.size(); ++g) {
    const mr::place where = mr::place_of(d, g);
    ASSERT_EQ(where.owner.rank(), mr::pe(d.owner(g)).rank()) << "g " << g;
    ASSERT_EQ(where.local, d.local(g)) << "g " << g;
    ASSERT_GE(where.owner.rank(), 0);
    ASSERT_LT(where.owner.rank(), P) << "g " << g;
    ASSERT_LT(where.local, seen[where.owner.rank()].size())
        << "g " << g << " on " << where.owner.rank();
    ASSERT_EQ(d.global(where.owner, where.local), g);
    ++seen[where.owner.rank()][where.local];
  }
  for (int p = 0; p < P; ++p)
    for (std::size_t l = 0; l < seen[p].size(); ++l)
      ASSERT_EQ(seen[p][l], 1) << "PE " << p << " local " << l;
}

// contiguous(g) is the length of the run of indices from g that g's owner holds at consecutive
// local indices (what global_array's ranges copy at once), counted here index by index.
template <class D>
void expect_contiguous(const D& d) {
  for (std::int64_t g = 0; g < d.size(); ++g) {
    const mr::place at = mr::place_of(d, g);
    std::int64_t run = 1;
    while (g + run < d.size()) {
      const mr::place next = mr::place_of(d, g + run);
      if (next.owner != at.owner || next.local != at.local + static_cast<std::size_t>(run)) break;
      ++run;
    }
    ASSERT_EQ(d.contiguous(g), run) << "g " << g;
  }
}

const std::int64_t k_sizes[] = {0, 1, 2, 7, 64, 100, 1001};
const int k_pes[] = {1, 2, 3, 7, 16};

TEST(Distribution, CyclicIsABijection) {
  for (const auto n : k_sizes)
    for (const int P : k_pes) expect_bijection(mr::cyclic(n, P), P);
}

TEST(Distribution, BlockIsABijection) {
  for (const auto n : k_sizes)
    for (const int P : k_pes) expect_bijection(mr::block(n, P), P);
}

TEST(Distribution, BlockCyclicIsABijection) {
  for (const auto n : k_sizes)
    for (const int P : k_pes)
      for (const std::int64_t b : {1, 3, 8, 2000}) expect_bijection(mr::block_cyclic(n, b, P), P);
}

TEST(Distribution, ContiguousRunsAreExact) {
  for (const int P : k_pes)
    for (const std::int64_t n : k_sizes) {
      expect_contiguous(mr::cyclic(n, P));
      expect_contiguous(mr::block(n, P));
      for (const std::int64_t b : {1, 2, 3, 8}) expect_contiguous(mr::block_cyclic(n, b, P));
    }
}

TEST(Distribution, LayoutsAreTheNamedOnes) {
  const mr::cyclic c(10, 3);
  EXPECT_EQ(c.owner(7).rank(), 1);
  EXPECT_EQ(c.local(7), 2u);
  const mr::block b(10, 3);  // blocks of 4: [0,4) [4,8) [8,10)
  EXPECT_EQ(b.block_size(), 4);
  EXPECT_EQ(b.owner(7).rank(), 1);
  EXPECT_EQ(b.local(7), 3u);
  EXPECT_EQ(b.local_size(mr::pe(2)), 2u);
  const mr::block_cyclic bc(20, 2, 3);  // blocks 0..9 of 2, dealt to PEs 0 1 2 0 1 2 ...
  EXPECT_EQ(bc.owner(7).rank(), 0);     // block 3
  EXPECT_EQ(bc.local(7), 3u);           // PE 0's second block, its second element
  EXPECT_EQ(bc.local_size(mr::pe(0)), 8u);
  EXPECT_EQ(bc.local_size(mr::pe(2)), 6u);
}

TEST(Distribution, UnboundedCyclicCountsWithoutOverflow) {
  constexpr std::int64_t n = std::numeric_limits<std::int64_t>::max();
  const mr::cyclic c(n, 3);
  EXPECT_EQ(c.local_size(mr::pe(0)), static_cast<std::size_t>(n / 3 + 1));  // n = 3k + 1
  EXPECT_EQ(c.local_size(mr::pe(2)), static_cast<std::size_t>(n / 3));
}

// A user-defined distribution with only the four required members: blocks in reverse PE order.
struct reversed_block {
  std::int64_t n, b;
  int P;
  [[nodiscard]] mr::pe owner(std::int64_t g) const { return mr::pe(P - 1 - g / b); }
  [[nodiscard]] std::size_t local(std::int64_t g) const { return static_cast<std::size_t>(g % b); }
  [[nodiscard]] std::int64_t global(mr::pe p, std::size_t l) const {
    return (P - 1 - p.rank()) * b + static_cast<std::int64_t>(l);
  }
  [[nodiscard]] std::int64_t size() const { return n; }
};

TEST(Distribution, UserDefinedUsesTheFallbacks) {
  const reversed_block d{10, 4, 3};
  EXPECT_EQ(mr::local_size(d, mr::pe(0)), 2u);  // counted: the last block
  EXPECT_EQ(mr::local_size(d, mr::pe(2)), 4u);
  expect_bijection(d, 3);
}

static_assert(!mr::distribution<int>);
static_assert(!mr::distribution<mr::pe>);
static_assert(std::is_trivially_copyable_v<mr::cyclic> && std::is_trivially_copyable_v<mr::block> &&
              std::is_trivially_copyable_v<mr::block_cyclic>);
// Words a closure that captures one compares per send.
static_assert(sizeof(mr::cyclic) == 24 && sizeof(mr::block) == 32 &&
              sizeof(mr::block_cyclic) == 40);

TEST(Distribution, ImpossibleSizesStopAtTheCallersLine) {
  EXPECT_EXIT(mr::block(-1, 2), testing::ExitedWithCode(1),
              "distribution_test.cpp.*block: -1 indices over 2 PEs");
  EXPECT_EXIT(mr::cyclic(5, 0), testing::ExitedWithCode(1), "cyclic: 5 indices over 0 PEs");
  EXPECT_EXIT(mr::block_cyclic(5, 0, 2), testing::ExitedWithCode(1), "block_cyclic: block size 0");
}

}  // namespace

// The multiply-and-shift division the distributions use, against the CPU's divide: divisors small
// and large, powers of two and their neighbours, up to 2^63 - 1; indices at the edges and spread
// over [0, 2^63).
TEST(Distribution, IndexDividerIsExact) {
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d <= 300; ++d) divisors.push_back(d);
  for (int k = 9; k < 63; ++k)
    for (const std::int64_t off : {-1, 0, 1}) divisors.push_back((std::int64_t{1} << k) + off);
  for (const std::int64_t d :
       {std::int64_t{1000003}, std::int64_t{2147483647}, std::int64_t{4611686018427387903}, top})
    divisors.push_back(d);
  std::uint64_t state = 0x9e3779b97f4a7c15u;  // splitmix64
  const auto next = [&state] {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  };
  for (const std::int64_t d : divisors) {
    const mr::detail::index_magic by = mr::detail::index_magic_for(d);
    std::vector<std::int64_t> ns = {0, 1, d - 1, d, top, top - 1, top - d + 1};
    if (d < top / 2)
      ns.insert(ns.end(), {d + 1, 2 * d - 1, 2 * d, (top / d) * d, (top / d) * d - 1});
    for (int i = 0; i < 2000; ++i) {
      const auto n = static_cast<std::int64_t>(next() >> 1);
      ns.push_back(n);
      ns.push_back(n >> (i % 62));  // small ones too
    }
    for (const std::int64_t n : ns) {
      if (n >= 0) {
        ASSERT_EQ(mr::detail::index_quotient(n, by.m, by.s), n / d) << n << " / " << d;
      }
    }
  }
}

// A negative index has no owner: PE -1, which a send refuses at the caller's line.
TEST(Distribution, NegativeIndicesHaveNoOwner) {
  for (const std::int64_t g :
       {std::int64_t{-1}, std::int64_t{-7}, std::numeric_limits<std::int64_t>::min()}) {
    EXPECT_EQ(mr::cyclic(100, 3).owner(g).rank(), -1);
    EXPECT_EQ(mr::block(100, 3).owner(g).rank(), -1);
    EXPECT_EQ(mr::block_cyclic(100, 4, 3).owner(g).rank(), -1);
  }
}

TEST(Distribution, LargeIndicesPlaceAsByDivision) {
  constexpr std::int64_t top = std::numeric_limits<std::int64_t>::max();
  for (const int P : {1, 2, 3, 7, 1000, 65537}) {
    const mr::cyclic cp(top, P);
    const mr::block_cyclic bc(top, 1000, P);
    for (const std::int64_t g : {top, top - 1, top / 3, (std::int64_t{1} << 40) + 12345}) {
      EXPECT_EQ(cp.owner(g).rank(), static_cast<int>(g % P));
      EXPECT_EQ(cp.local(g), static_cast<std::size_t>(g / P));
      EXPECT_EQ(bc.owner(g).rank(), static_cast<int>(g / 1000 % P));
      EXPECT_EQ(bc.local(g), static_cast<std::size_t>(g / 1000 / P * 1000 + g % 1000));
    }
  }
}
