// SPDX-License-Identifier: MIT
// The two Bale kernels the paper opens with, histogram and index-gather, each written with typed
// messages (selector API) and with lambda messages, and checked exactly: the histogram against a
// serial recount of every PE's indices, the gathered values against the table's formula.
#include <mailroom/mailroom.hpp>

#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace mr = mailroom;

namespace {

constexpr std::int64_t histogram_slots_per_pe = 1000;
constexpr std::int64_t table_slots_per_pe = 10000;

// The random global indices PE `p` uses; every PE can regenerate any PE's stream.
std::vector<std::int64_t> indices_of(int p, std::int64_t n, std::int64_t range) {
  std::mt19937_64 rng(0xba1e + static_cast<std::uint64_t>(p) * 7919);
  std::uniform_int_distribution<std::int64_t> pick(0, range - 1);
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  for (auto& g : out) g = pick(rng);
  return out;
}

// The index-gather table holds value_of(g) at global index g (never 0, the initial value).
std::int64_t value_of(std::int64_t g) { return g * 3 + 1; }

// Counts this PE's failures and prints them; returns 1 on failure.
int report(const char* variant, std::int64_t mismatches) {
  std::int64_t total = mismatches;
  MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (mr::this_pe().rank() == 0)
    std::printf("%-22s %s (%lld mismatches)\n", variant, total == 0 ? "PASSED" : "FAILED",
                static_cast<long long>(total));
  return total == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  const int pes = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 50000;
  int failures = 0;

  // ---- histogram: slot g lives on PE g % P at local index g / P.
  const std::int64_t hist_range = histogram_slots_per_pe * pes;
  const std::vector<std::int64_t> hist_index = indices_of(me, n, hist_range);
  std::vector<std::int64_t> hist_expected(histogram_slots_per_pe, 0);
  for (int p = 0; p < pes; ++p)
    for (std::int64_t g : indices_of(p, n, hist_range))
      if (g % pes == me) hist_expected[static_cast<std::size_t>(g / pes)] += 1;

  {
    std::vector<std::int64_t> histo(histogram_slots_per_pe, 0);
    mr::selector hist{mr::mailbox<std::int64_t>([&](std::int64_t slot) { histo[slot] += 1; })};
    for (std::int64_t g : hist_index) hist.send<0>(mr::pe(g % pes), g / pes);
    hist.done<0>();
    hist.wait();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < histogram_slots_per_pe; ++i) bad += histo[i] != hist_expected[i];
    failures += report("histogram/selector", bad);
  }
  {
    auto histo = mr::symmetric_array<std::int64_t>(histogram_slots_per_pe);
    mr::actor<> hist;
    for (std::int64_t g : hist_index) {
      const std::int64_t slot = g / pes;
      hist.send(mr::pe(g % pes), [=] { histo[slot] += 1; });
    }
    hist.done();
    hist.wait();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < histogram_slots_per_pe; ++i) bad += histo[i] != hist_expected[i];
    failures += report("histogram/lambda", bad);
    mr::symmetric_free(histo);
  }

  // ---- index-gather: gather[i] = table[index[i]], table distributed cyclically.
  const std::int64_t table_range = table_slots_per_pe * pes;
  const std::vector<std::int64_t> ig_index = indices_of(me + pes, n, table_range);
  {
    std::vector<std::int64_t> table(table_slots_per_pe);
    for (std::int64_t i = 0; i < table_slots_per_pe; ++i) table[i] = value_of(i * pes + me);
    std::vector<std::int64_t> gather(static_cast<std::size_t>(n), 0);
    struct request {
      std::int64_t col, slot;
    };
    struct reply {
      std::int64_t slot, value;
    };
    std::int64_t wrong_sender = 0;
    mr::selector ig{mr::mailbox<request>([&](request r, mr::pe from, auto& self) {
                      self.template send<1>(from, reply{r.slot, table[r.col]});
                    }),
                    mr::mailbox<reply>([&](reply r, mr::pe from) {
                      gather[r.slot] = r.value;
                      wrong_sender += from.rank() != ig_index[r.slot] % pes;
                    })};
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t g = ig_index[i];
      ig.send<0>(mr::pe(g % pes), request{g / pes, i});
    }
    ig.done<0>();  // the default graph is the chain 0 -> 1: the runtime closes mailbox 1
    ig.wait();
    std::int64_t bad = wrong_sender;
    for (std::int64_t i = 0; i < n; ++i) bad += gather[i] != value_of(ig_index[i]);
    failures += report("index_gather/selector", bad);
  }
  {
    auto table = mr::symmetric_array<std::int64_t>(table_slots_per_pe);
    for (std::int64_t i = 0; i < table_slots_per_pe; ++i) table[i] = value_of(i * pes + me);
    auto gather = mr::symmetric_array<std::int64_t>(static_cast<std::size_t>(n));
    mr::selector ig{mr::lambdas{}, mr::lambdas{}};
    auto ref = ig.ref();
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t col = ig_index[i] / pes, slot = i;
      ig.send<0>(mr::pe(ig_index[i] % pes), [=] {
        const std::int64_t v = table[col];
        ref->send<1>(mr::sender(), [=] { gather[slot] = v; });
      });
    }
    ig.done<0>();
    ig.wait();
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i) bad += gather[i] != value_of(ig_index[i]);
    failures += report("index_gather/lambda", bad);
  }
  return failures == 0 ? 0 : 1;
}
