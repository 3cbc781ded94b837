// SPDX-License-Identifier: MIT
// The public collectives, futures and teams, checked exactly against values every PE can compute
// by itself: reductions of every kind (MPI's own and a user function that does not commute),
// element-wise, broadcast, gather, all_gather, exclusive_scan, all_to_all(_v), 8 non-blocking
// all_reduces in flight beside actor traffic, 200 in flight of many sizes, futures chained with
// then and when_all, a selector's termination as a future, and collectives over the rows and
// columns of a grid.
// Written against mailroom's API only, so that it runs on the simulated machine too.
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <array>
#include <cstdint>
#include <cstdio>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;

// A value per PE that every PE can compute for any PE.
std::int64_t value_of(int p, int salt = 0) { return 1000 * (p + 1) + 7 * salt + (p * p) % 13; }

// x -> a x + b (mod 2^64): composition is associative and does not commute, so a reduction in
// any order but rank order gives another answer.
struct affine {
  std::uint64_t a, b;
};
struct compose {
  // (f then g) as one map: MPI's order is in[i] op inout[i] with `in` from lower ranks.
  affine operator()(const affine& f, const affine& g) const { return {g.a * f.a, g.a * f.b + g.b}; }
};
affine affine_of(int p) {
  return {2 * static_cast<std::uint64_t>(p) + 3, static_cast<std::uint64_t>(value_of(p))};
}

int reductions() {
  int failures = 0;
  std::int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN, band = -1, bor = 0, bxor = 0;
  double dsum = 0;
  affine comp{1, 0};
  for (int p = 0; p < g_pes; ++p) {
    const std::int64_t v = value_of(p);
    sum += v;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
    band &= v;
    bor |= v;
    bxor ^= v;
    dsum += 0.5 * static_cast<double>(p);
    comp = compose{}(comp, affine_of(p));
  }
  const std::int64_t mine = value_of(g_me);
  EXPECT(mr::all_reduce(mine) == sum, "sum");
  EXPECT(mr::all_reduce(mine, mr::plus<>{}) == sum, "plus<>");
  EXPECT(mr::all_reduce(mine, std::plus<std::int64_t>{}) == sum, "std::plus");
  EXPECT(mr::all_reduce(mine, mr::min<>{}) == mn, "min");
  EXPECT(mr::all_reduce(mine, mr::max<>{}) == mx, "max");
  EXPECT(mr::all_reduce(mine, mr::bit_and<>{}) == band, "bit_and");
  EXPECT(mr::all_reduce(mine, mr::bit_or<>{}) == bor, "bit_or");
  EXPECT(mr::all_reduce(mine, mr::bit_xor<>{}) == bxor, "bit_xor");
  EXPECT(mr::all_reduce(static_cast<std::uint32_t>(mine)) == static_cast<std::uint32_t>(sum),
         "uint32 sum");
  EXPECT(mr::all_reduce(0.5 * g_me) == dsum, "double sum");
  // A user function with state: the lambda's capture takes part.
  const std::int64_t scale = 3 + 0 * int{g_me};  // (not a constant: the capture is needed)
  EXPECT(mr::all_reduce(mine, [scale](std::int64_t a,
                                      std::int64_t b) { return a + b * 0 + scale * 0 + b; }) == sum,
         "lambda");
  const affine got = mr::all_reduce(affine_of(g_me), compose{});
  EXPECT(got.a == comp.a && got.b == comp.b,
         "affine composition in rank order: %llu %llu, want "
         "%llu %llu",
         static_cast<unsigned long long>(got.a), static_cast<unsigned long long>(got.b),
         static_cast<unsigned long long>(comp.a), static_cast<unsigned long long>(comp.b));
  // Element-wise over arrays, MPI's own and custom, and in place.
  constexpr std::size_t n = 1000;
  std::vector<std::int64_t> in(n), out(n, -1);
  for (std::size_t i = 0; i < n; ++i) in[i] = value_of(g_me, static_cast<int>(i));
  mr::all_reduce(std::span<const std::int64_t>(in), std::span<std::int64_t>(out), mr::max<>{});
  std::vector<affine> ain(n), aout(n);
  for (std::size_t i = 0; i < n; ++i) ain[i] = {affine_of(g_me).a + i, affine_of(g_me).b};
  mr::all_reduce(std::span<const affine>(ain), std::span<affine>(aout), compose{});
  std::vector<std::int64_t> inplace = in;
  mr::all_reduce(std::span<std::int64_t>(inplace));
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t want_max = INT64_MIN, want_sum = 0;
    affine want_comp{1, 0};
    for (int p = 0; p < g_pes; ++p) {
      want_max = std::max(want_max, value_of(p, static_cast<int>(i)));
      want_sum += value_of(p, static_cast<int>(i));
      want_comp = compose{}(want_comp, affine{affine_of(p).a + i, affine_of(p).b});
    }
    EXPECT(out[i] == want_max, "element %zu: max", i);
    EXPECT(inplace[i] == want_sum, "element %zu: in place sum", i);
    EXPECT(aout[i].a == want_comp.a && aout[i].b == want_comp.b, "element %zu: affine", i);
  }
  return failures;
}

int data_movement() {
  int failures = 0;
  const int root = g_pes - 1;
  EXPECT(mr::broadcast(g_me == root ? value_of(root) : -1, root) == value_of(root), "broadcast");
  std::vector<std::int64_t> data(100, g_me == 0 ? 42 : 0);
  mr::broadcast(std::span<std::int64_t>(data), 0);
  EXPECT(std::all_of(data.begin(), data.end(), [](std::int64_t x) { return x == 42; }),
         "broadcast of a span");
  const auto g = mr::gather(value_of(g_me), 0);
  EXPECT(g.size() == (g_me == 0 ? static_cast<std::size_t>(g_pes) : 0), "gather size %zu",
         g.size());
  for (std::size_t p = 0; p < g.size(); ++p)
    EXPECT(g[p] == value_of(static_cast<int>(p)), "gather[%zu]", p);
  const auto ag = mr::all_gather(value_of(g_me));
  EXPECT(ag.size() == static_cast<std::size_t>(g_pes), "all_gather size");
  for (std::size_t p = 0; p < ag.size(); ++p)
    EXPECT(ag[p] == value_of(static_cast<int>(p)), "all_gather[%zu]", p);
  const std::array<int, 3> three{g_me, -g_me, 7};
  const auto ag3 = mr::all_gather(std::span<const int>(three));
  for (int p = 0; p < g_pes; ++p)
    EXPECT(ag3[3 * p] == p && ag3[3 * p + 1] == -p && ag3[3 * p + 2] == 7, "all_gather span %d", p);
  std::int64_t below = 0;
  for (int p = 0; p < g_me; ++p) below += value_of(p);
  EXPECT(mr::exclusive_scan(value_of(g_me), std::int64_t{0}) == below, "exclusive_scan");
  EXPECT(mr::exclusive_scan(value_of(g_me), std::int64_t{5}) == 5 + below, "exclusive_scan init");
  affine scan_want{1, 0};
  for (int p = 0; p < g_me; ++p) scan_want = compose{}(scan_want, affine_of(p));
  const affine scan = mr::exclusive_scan(affine_of(g_me), affine{1, 0}, compose{});
  EXPECT(scan.a == scan_want.a && scan.b == scan_want.b, "exclusive_scan affine");
  // all_to_all: block d of PE s holds s * 1000 + d, twice.
  std::vector<std::int64_t> send(2 * static_cast<std::size_t>(g_pes));
  for (int d = 0; d < g_pes; ++d) send[2 * d] = send[2 * d + 1] = g_me * 1000 + d;
  const auto recv = mr::all_to_all(std::span<const std::int64_t>(send));
  for (int s = 0; s < g_pes; ++s)
    EXPECT(recv[2 * s] == s * 1000 + g_me && recv[2 * s + 1] == s * 1000 + g_me,
           "all_to_all from %d", s);
  // all_to_all_v: PE s sends (s + d) % 3 copies of s * 1000 + d to PE d, in buckets of 4 with
  // gaps (displacements given).
  std::vector<int> counts(g_pes), displs(g_pes);
  std::vector<std::int64_t> vsend(4 * static_cast<std::size_t>(g_pes), -1);
  for (int d = 0; d < g_pes; ++d) {
    counts[d] = (g_me + d) % 3;
    displs[d] = 4 * d;
    for (int k = 0; k < counts[d]; ++k) vsend[4 * d + k] = g_me * 1000 + d;
  }
  const auto vrecv = mr::all_to_all_v(std::span<const std::int64_t>(vsend),
                                      std::span<const int>(counts), std::span<const int>(displs));
  std::vector<std::int64_t> vwant;
  for (int s = 0; s < g_pes; ++s)
    for (int k = 0; k < (s + g_me) % 3; ++k) vwant.push_back(s * 1000 + g_me);
  EXPECT(vrecv == vwant, "all_to_all_v: %zu elements, want %zu", vrecv.size(), vwant.size());
  mr::barrier(mr::team::world());
  return failures;
}

// 8 non-blocking all_reduces in flight while an actor's messages go everywhere; then all
// finish together. Every message is counted; every reduction is exact.
int in_flight_with_actor_traffic() {
  int failures = 0;
  constexpr int k_reductions = 8;
  constexpr std::int64_t k_messages = 20000;
  std::int64_t received = 0;
  mr::actor<std::int64_t> counter([&](std::int64_t v) { received += v; });
  std::vector<mr::future<std::int64_t>> sums;
  std::mt19937_64 rng(static_cast<std::uint64_t>(g_me) + 1);
  for (std::int64_t i = 0; i < k_messages; ++i) {
    counter.send(mr::pe(static_cast<int>(rng() % static_cast<std::uint64_t>(g_pes))), 1);
    if (i % (k_messages / k_reductions) == 0 && sums.size() < k_reductions)
      sums.push_back(mr::all_reduce_async(value_of(g_me, static_cast<int>(sums.size()))));
  }
  counter.done();
  // The actor's termination and the sums, waited on together.
  auto all = mr::when_all(mr::when_all(sums), counter.finished_future());
  const auto [values] = all.get();
  EXPECT(values.size() == k_reductions, "%zu sums", values.size());
  for (std::size_t r = 0; r < values.size(); ++r) {
    std::int64_t want = 0;
    for (int p = 0; p < g_pes; ++p) want += value_of(p, static_cast<int>(r));
    EXPECT(values[r] == want, "reduction %zu", r);
  }
  counter.wait();
  EXPECT(mr::all_reduce(received) == k_messages * g_pes, "messages handled");
  return failures;
}

// 200 non-blocking all_reduces in flight at once, of 0 to 300 elements, sums and the composition
// that does not commute, some waited for midway, each checked exactly. Within a node they pass
// through the shared ring (the test runs also with a ring of 4 KiB, which they fill and wrap,
// the larger going through MPI meanwhile; and with none).
int many_in_flight() {
  int failures = 0;
  constexpr int k_reductions = 200;
  const auto size_of = [](int r) { return static_cast<std::size_t>((r * 37) % 301); };
  const auto sum_elem = [](int p, int r, std::size_t i) {
    return value_of(p, r + static_cast<int>(i));
  };
  const auto map_elem = [](int p, int r, std::size_t i) {
    return affine{2 * static_cast<std::uint64_t>(p) + 3 + 2 * i,
                  static_cast<std::uint64_t>(value_of(p, r + static_cast<int>(i)))};
  };
  const auto composed = [](int r) { return r % 5 == 0; };
  std::vector<std::vector<std::int64_t>> in(k_reductions), out(k_reductions);
  std::vector<std::vector<affine>> ain(k_reductions), aout(k_reductions);
  std::vector<mr::future<void>> done;
  for (int r = 0; r < k_reductions; ++r) {
    const auto k = static_cast<std::size_t>(r);
    const std::size_t n = size_of(r);
    if (composed(r)) {
      for (std::size_t i = 0; i < n; ++i) ain[k].push_back(map_elem(g_me, r, i));
      aout[k].assign(n, affine{0, 0});
      done.push_back(mr::all_reduce_async(std::span<const affine>(ain[k]),
                                          std::span<affine>(aout[k]), compose{}));
    } else {
      for (std::size_t i = 0; i < n; ++i) in[k].push_back(sum_elem(g_me, r, i));
      out[k].assign(n, -1);
      done.push_back(mr::all_reduce_async(std::span<const std::int64_t>(in[k]),
                                          std::span<std::int64_t>(out[k])));
    }
    if (r % 50 == 49) done[k - 40].wait();  // (the others stay in flight)
  }
  mr::when_all(done).wait();
  int wrong = 0;
  for (int r = 0; r < k_reductions; ++r) {
    const auto k = static_cast<std::size_t>(r);
    for (std::size_t i = 0; i < size_of(r); ++i) {
      if (composed(r)) {
        affine want{1, 0};
        for (int p = 0; p < g_pes; ++p) want = compose{}(want, map_elem(p, r, i));
        wrong += aout[k][i].a != want.a || aout[k][i].b != want.b;
      } else {
        std::int64_t want = 0;
        for (int p = 0; p < g_pes; ++p) want += sum_elem(p, r, i);
        wrong += out[k][i] != want;
      }
    }
  }
  EXPECT(wrong == 0, "%d elements of %d reductions in flight together", wrong, k_reductions);
  return failures;
}

// Reductions in flight while the members reach a blocking call of mailroom's in different orders:
// even members wait for them and then split a team, odd members split first. A member blocked in
// the split must keep its reductions moving (through the 4 KiB ring most wait for room), or the
// others never finish theirs and never reach the split.
int waits_in_other_orders() {
  int failures = 0;
  constexpr int k_reductions = 64;
  std::vector<std::vector<std::int64_t>> in(k_reductions), out(k_reductions);
  std::vector<mr::future<void>> done;
  for (int r = 0; r < k_reductions; ++r) {
    const auto k = static_cast<std::size_t>(r);
    in[k].assign(100, value_of(g_me, r));
    out[k].assign(100, -1);
    done.push_back(mr::all_reduce_async(std::span<const std::int64_t>(in[k]),
                                        std::span<std::int64_t>(out[k])));
  }
  auto all = mr::when_all(done);
  std::optional<mr::team> halves;
  if (g_me % 2 == 0) {
    all.wait();
    halves = mr::team::world().split(g_me % 2);
  } else {
    halves = mr::team::world().split(g_me % 2);
    all.wait();
  }
  int wrong = 0;
  for (int r = 0; r < k_reductions; ++r) {
    std::int64_t want = 0;
    for (int p = 0; p < g_pes; ++p) want += value_of(p, r);
    for (const std::int64_t v : out[static_cast<std::size_t>(r)]) wrong += v != want;
  }
  EXPECT(wrong == 0, "%d elements wrong", wrong);
  EXPECT(halves->size() == (g_pes + 1 - g_me % 2) / 2, "team of %d", halves->size());
  return failures;
}

int futures_chain() {
  int failures = 0;
  mr::promise<int> p;
  auto doubled = p.get_future().then([](int x) { return 2 * x; });
  // A continuation that starts a collective: the chain is one future (then unwraps).
  auto reduced = doubled.then([](int x) { return mr::all_reduce_async(std::int64_t{x}); });
  bool ran = false;
  auto side = reduced.then([&](std::int64_t) { ran = true; });
  EXPECT(!doubled.ready() && !reduced.ready(), "ready before the value was set");
  p.set_value(g_me);
  EXPECT(doubled.ready() && doubled.get() == 2 * g_me, "then");
  std::int64_t want = 0;
  for (int q = 0; q < g_pes; ++q) want += 2 * q;
  EXPECT(reduced.get() == want, "then unwrapping a collective's future");
  side.wait();
  EXPECT(ran, "a continuation of void");
  auto both = mr::when_all(mr::make_ready_future(1), mr::make_ready_future(), doubled);
  const auto [a, b] = both.get();
  EXPECT(a == 1 && b == 2 * g_me, "when_all of ready futures");
  return failures;
}

// Rows and columns of a grid of 2 columns: sums over each, and a barrier on each.
int grid_teams() {
  int failures = 0;
  const int columns = g_pes >= 2 ? 2 : 1;
  const auto grid = mr::split_grid(columns);
  const int row = g_me / columns, col = g_me % columns;
  std::int64_t row_sum = 0, col_sum = 0;
  for (int p = 0; p < g_pes; ++p) {
    if (p / columns == row) row_sum += value_of(p);
    if (p % columns == col) col_sum += value_of(p);
  }
  EXPECT(grid.row.rank() == col && grid.column.rank() == row, "ranks %d %d", grid.row.rank(),
         grid.column.rank());
  EXPECT(grid.row.world_pe(grid.row.rank()) == mr::this_pe(), "world_pe");
  auto r = mr::all_reduce_async(value_of(g_me), mr::plus<>{}, grid.row);
  auto c = mr::all_reduce_async(value_of(g_me), mr::plus<>{}, grid.column);
  EXPECT(r.get() == row_sum, "row sum");
  EXPECT(c.get() == col_sum, "column sum");
  const auto members = mr::all_gather(int{g_me}, grid.column);
  for (std::size_t i = 0; i < members.size(); ++i)
    EXPECT(members[i] == static_cast<int>(i) * columns + col, "column member %zu", i);
  mr::barrier(grid.row);
  // Only the even PEs form a team; the odd ones join none.
  const mr::team even = mr::team::world().split(g_me % 2 == 0 ? 0 : -1);
  EXPECT(even.valid() == (g_me % 2 == 0), "membership");
  if (even.valid()) {
    std::int64_t want = 0;
    for (int p = 0; p < g_pes; p += 2) want += p;
    EXPECT(mr::all_reduce(std::int64_t{g_me}, mr::plus<>{}, even) == want, "even sum");
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    int failures = 0;
    failures += reductions();
    failures += data_movement();
    failures += in_flight_with_actor_traffic();
    failures += many_in_flight();
    failures += waits_in_other_orders();
    failures += futures_chain();
    failures += grid_teams();
    return mailroom_test::verdict(failures);
  });
}
