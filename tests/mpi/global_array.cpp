// SPDX-License-Identifier: MIT
// The global view (global_array), checked exactly in each cache mode: disjoint writes into one
// page from every PE all survive a sync; reads after another PE's sync see its values (never a
// stale page); a cache of two pages (evicting, and writing back, in the middle of an interval)
// stays right; prefetched pages are hits; racing writes to one element leave one writer's value,
// the same for every PE; ranges across owners; cyclic distributions and elements that do not
// divide the page; team barriers sync too; tasks on every worker read and write through their
// own caches. Written against mailroom's API only, so that it runs
// on the simulated machine too.
#include <mailroom/mailroom.hpp>

#include "expect.hpp"

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace mr = mailroom;

namespace {

using mailroom_test::g_me;
using mailroom_test::g_pes;
using mailroom_test::mix;

std::int64_t value(std::int64_t g, int round) { return g * 1000 + round; }

// Every PE writes the elements g with g % P == me, everywhere in the array (so every page has
// elements of every PE), then each reads them all after the sync.
template <class D>
int disjoint_writes(const D& d, const mr::global_view_options& o, const char* what) {
  int failures = 0;
  mr::global_array<std::int64_t, D> a(d, o);
  const std::int64_t n = a.size();
  for (int round = 1; round <= 3; ++round) {
    for (std::int64_t g = g_me; g < n; g += g_pes) a.put(g, value(g, round));
    mr::sync();
    for (std::int64_t g = 0; g < n; ++g) {
      const std::int64_t v = a.get(g);
      EXPECT(v == value(g, round), "%s: round %d: element %lld is %lld, want %lld", what, round,
             static_cast<long long>(g), static_cast<long long>(v),
             static_cast<long long>(value(g, round)));
      if (v != value(g, round)) break;
    }
    mr::sync();  // (nobody writes the next round's values while another still reads these)
  }
  return failures;
}

// Each owner writes its own part (in place); the others read it after the sync, round after
// round: a page cached in one round must not be read in the next.
int no_stale_reads(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_array<std::int64_t> a(64 * g_pes, o);
  std::span<std::int64_t> mine = a.local();
  for (int round = 1; round <= 4; ++round) {
    for (std::size_t l = 0; l < mine.size(); ++l)
      mine[l] = value(a.dist().global(mr::this_pe(), l), round);
    mr::sync();
    for (std::int64_t g = 0; g < a.size(); ++g) {
      const std::int64_t v = a[g];
      EXPECT(v == value(g, round), "round %d: element %lld is %lld (stale?)", round,
             static_cast<long long>(g), static_cast<long long>(v));
      if (v != value(g, round)) break;
    }
    mr::sync();
  }
  return failures;
}

// Pages of 64 bytes, room for two: random reads and writes (each PE its own elements) evict
// and write back all the time; a model of the array says what every read must see.
int tiny_cache(mr::global_view_options o) {
  int failures = 0;
  o.page_bytes = 64;
  o.cache_bytes = 128;
  const std::int64_t n = 40 * g_pes + 3;
  mr::global_array<std::int64_t> a(n, o);
  std::vector<std::int64_t> model(static_cast<std::size_t>(n), 0);
  for (int round = 1; round <= 3; ++round) {
    for (int k = 0; k < 600; ++k) {
      const std::uint64_t r = mix(static_cast<std::uint64_t>(k) * 7919 +
                                  static_cast<std::uint64_t>(round * 131 + g_me));
      if ((k & 1) != 0) {  // a write to one of this PE's elements (g % P == me), anywhere
        const auto g =
            static_cast<std::int64_t>(r % static_cast<std::uint64_t>(n / g_pes)) * g_pes + g_me;
        a[g] = value(g, round) + k;
        model[static_cast<std::size_t>(g)] = value(g, round) + k;
        continue;
      }
      const auto g = static_cast<std::int64_t>(r % static_cast<std::uint64_t>(n));
      const std::int64_t v = a[g];  // (others' elements: cached, then evicted)
      if (g % g_pes == g_me)
        EXPECT(v == model[static_cast<std::size_t>(g)], "round %d: own element %lld is %lld", round,
               static_cast<long long>(g), static_cast<long long>(v));
    }
    mr::sync();
    // Every PE's model: what each element's owner wrote last.
    std::vector<std::int64_t> owned(model.size()), want(model.size());
    for (std::int64_t g = 0; g < n; ++g)
      owned[static_cast<std::size_t>(g)] =
          g % g_pes == g_me ? model[static_cast<std::size_t>(g)] : 0;
    mr::all_reduce(std::span<const std::int64_t>(owned), std::span<std::int64_t>(want));
    model = want;
    for (std::int64_t g = 0; g < n; ++g) {
      const std::int64_t v = a.get(g);
      EXPECT(v == model[static_cast<std::size_t>(g)], "round %d: element %lld is %lld, want %lld",
             round, static_cast<long long>(g), static_cast<long long>(v),
             static_cast<long long>(model[static_cast<std::size_t>(g)]));
      if (v != model[static_cast<std::size_t>(g)]) break;
    }
    mr::sync();
  }
  const mr::global_view_statistics s = a.statistics();
  if (o.mode == mr::cache_mode::all && g_pes > 1)
    EXPECT(s.evictions > 0 && s.pages_written_back > 0, "evictions %lld, pages written back %lld",
           static_cast<long long>(s.evictions), static_cast<long long>(s.pages_written_back));
  return failures;
}

// Prefetch the next PE's part, wait, then every read of it is a hit.
int prefetch_hits(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_array<double> a(1024 * g_pes, o);
  for (std::size_t l = 0; l < a.local().size(); ++l) a.local()[l] = g_me + 0.5;
  mr::sync();
  const int next = (g_me + 1) % g_pes;
  const std::int64_t from = a.dist().global(mr::pe(next), 0);
  const mr::global_view_statistics before = a.statistics();
  a.prefetch(from, 1024).get();
  const mr::global_view_statistics fetched = a.statistics();
  double sum = 0;
  for (std::int64_t g = from; g < from + 1024; ++g) sum += a[g];
  mr::global_view_statistics after = a.statistics();
  after -= fetched;
  EXPECT(sum == 1024 * (next + 0.5), "sum %f", sum);
  if (g_pes > 1 && o.mode != mr::cache_mode::off) {
    EXPECT(after.misses == 0, "%lld misses after the prefetch",
           static_cast<long long>(after.misses));
    if (o.mode == mr::cache_mode::all)
      EXPECT(fetched.pages_prefetched - before.pages_prefetched == 1024 * 8 / 4096,
             "%lld pages prefetched",
             static_cast<long long>(fetched.pages_prefetched - before.pages_prefetched));
  }
  if (g_pes > 1 && o.mode == mr::cache_mode::off)
    EXPECT(after.direct == 1024, "%lld one-sided reads", static_cast<long long>(after.direct));
  mr::sync();
  return failures;
}

// Every PE writes its rank into element 0 (and element 1's owner too, in place): one value
// survives, the same everywhere.
int racing_writes(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_array<std::int64_t> a(8 * g_pes, o);
  a.put(0, 100 + g_me);
  mr::sync();
  const std::int64_t v = a.get(0);
  EXPECT(v >= 100 && v < 100 + g_pes, "element 0 is %lld", static_cast<long long>(v));
  EXPECT(mr::all_reduce(v, mr::max{}) == mr::all_reduce(v, mr::min{}), "PEs disagree on element 0");
  mr::sync();
  return failures;
}

// Ranges across owners: PE 0 writes the whole array in one call, then each PE reads it back
// in pieces that straddle owners. Elements of 24 bytes (pages of 4 KiB hold 170 and a part).
struct point {
  double x, y;
  std::int64_t id;
};
int ranges(const mr::global_view_options& o) {
  int failures = 0;
  const std::int64_t n = 1000 * g_pes + 7;
  mr::global_array<point> a(n, o);
  if (g_me == 0) {
    std::vector<point> all(static_cast<std::size_t>(n));
    for (std::int64_t g = 0; g < n; ++g) all[static_cast<std::size_t>(g)] = {g * 0.5, -g * 0.25, g};
    a.write(0, all);
  }
  mr::sync();
  std::vector<point> piece(333);
  for (std::int64_t g = 0; g + 333 <= n; g += 311) {
    a.read(g, piece);
    for (std::size_t k = 0; k < piece.size(); ++k) {
      const auto want = g + static_cast<std::int64_t>(k);
      EXPECT(piece[k].id == want && piece[k].x == want * 0.5, "element %lld is %lld",
             static_cast<long long>(want), static_cast<long long>(piece[k].id));
      if (piece[k].id != want) return failures;
    }
  }
  mr::sync();
  return failures;
}

// A write made visible by a team's barrier (the job's team), and += through the reference.
int team_barrier_syncs(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_array<std::int64_t> a(4 * g_pes, o);
  for (std::int64_t g = 0; g < a.size(); ++g)
    if (g % g_pes == g_me) a[g] += g + 1;
  mr::barrier(mr::team::world());
  for (std::int64_t g = 0; g < a.size(); ++g)
    EXPECT(a.get(g) == g + 1, "element %lld is %lld", static_cast<long long>(g),
           static_cast<long long>(a.get(g)));
  mr::sync();
  return failures;
}

// From the tasks of every worker (MAILROOM_WORKERS): each PE writes its elements in a parallel
// loop (each worker through its own cache), syncs, then every worker reads the whole array.
int from_workers(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_view_options small = o;
  small.page_bytes = 256;
  small.cache_bytes = 4096;  // (16 pages a worker: evictions from pool workers too)
  mr::global_array<std::int64_t> a(700 * g_pes + 1, small);
  const std::int64_t n = a.size();
  const int me = g_me, pes = g_pes;
  for (int round = 1; round <= 2; ++round) {
    mr::parallel_for(std::int64_t{0}, n, [&](std::int64_t g) {
      if (g % pes == me) a.put(g, value(g, round));
    });
    mr::sync();
    std::atomic<std::int64_t> wrong{0};
    mr::parallel_for(std::int64_t{0}, n, [&](std::int64_t g) {
      if (a.get(g) != value(g, round)) wrong.fetch_add(1, std::memory_order_relaxed);
    });
    EXPECT(wrong.load() == 0, "round %d: %lld elements wrong", round,
           static_cast<long long>(wrong.load()));
    mr::sync();
  }
  return failures;
}

// symmetric_free syncs first (the writes land before the part goes), and a new array in the
// same room starts zeroed with an empty cache.
int freed_and_reused(const mr::global_view_options& o) {
  int failures = 0;
  mr::global_array<std::int64_t> a(50 * g_pes, o);
  for (std::int64_t g = g_me; g < a.size(); g += g_pes) a.put(g, g + 7);
  const std::int64_t* mine = a.local().data();
  mr::symmetric_free(a);  // (collective: includes the sync)
  std::int64_t sum = 0;
  for (std::int64_t l = 0; l < 50; ++l) sum += mine[l];  // (the freed room, not yet reused)
  std::int64_t want = 0;
  for (std::int64_t l = 0; l < 50; ++l) want += 50 * g_me + l + 7;
  EXPECT(sum == want, "the writes before symmetric_free: sum %lld, want %lld",
         static_cast<long long>(sum), static_cast<long long>(want));
  mr::global_array<std::int64_t> b(50 * g_pes, o);
  for (std::int64_t g = 0; g < b.size(); ++g)
    EXPECT(b.get(g) == 0, "new element %lld is %lld", static_cast<long long>(g),
           static_cast<long long>(b.get(g)));
  mr::sync();
  return failures;
}

int all_of(mr::cache_mode mode) {
  mr::global_view_options o;
  o.mode = mode;
  mr::global_view_options small_pages = o;
  small_pages.page_bytes = 64;
  int failures = 0;
  failures += disjoint_writes(mr::block(100 * g_pes + 5), small_pages, "block");
  failures += disjoint_writes(mr::cyclic(100 * g_pes + 5), small_pages, "cyclic");
  failures += disjoint_writes(mr::block_cyclic(100 * g_pes + 5, 3), small_pages, "block_cyclic");
  failures += no_stale_reads(small_pages);
  failures += tiny_cache(o);
  failures += prefetch_hits(o);
  failures += racing_writes(o);
  failures += ranges(o);
  failures += team_barrier_syncs(o);
  failures += from_workers(o);
  failures += freed_and_reused(o);
  if (failures > 0)
    std::printf("rank %d: mode %s: %d failures\n", int{g_me},
                mr::cache_mode_name(static_cast<std::uint64_t>(mode)), failures);
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  return mailroom_test::run_main([&] {
    mr::runtime rt(argc, argv);
    // Every mode, or those named on the command line (remote, all, off).
    std::vector<mr::cache_mode> modes;
    for (int i = 1; i < argc; ++i)
      for (const auto m : {mr::cache_mode::remote, mr::cache_mode::all, mr::cache_mode::off})
        if (std::string(argv[i]) == mr::cache_mode_name(static_cast<std::uint64_t>(m)))
          modes.push_back(m);
    if (modes.empty()) modes = {mr::cache_mode::remote, mr::cache_mode::all, mr::cache_mode::off};
    int failures = 0;
    for (const auto mode : modes) failures += all_of(mode);
    return mailroom_test::verdict(failures);
  });
}
