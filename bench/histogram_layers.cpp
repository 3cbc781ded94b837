// The cost of each API layer on the same histogram, measured in one run: the raw conveyor (a
// hand-written push/pull/advance loop), the selector API (typed messages, inlined handler) and
// lambda messages. Barrier to barrier, slowest PE, median of the repetitions, the order of the
// variants rotated every repetition.
#include <mpi.h>
#include <mailroom/mailroom.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace mr = mailroom;

namespace {
template <class F>
double timed(F&& kernel) {
  mr::barrier();
  const double t0 = mr::wtime();
  kernel();
  mr::barrier();
  double t = mr::wtime() - t0, slowest = 0;
  MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int P = mr::num_pes();
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 10'000'000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const std::int64_t T = 1000;
  std::mt19937_64 rng(99 + static_cast<std::uint64_t>(mr::this_pe().rank()));
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (auto& g : index) g = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(T * P));
  std::vector<std::int64_t> histo(T);
  auto h = mr::symmetric_array<std::int64_t>(T);

  std::vector<double> t_conv, t_sel, t_lam;
  auto run_conveyor = [&] {
    t_conv.push_back(timed([&] {
      mr::conveyor<std::int64_t> c;
      std::int64_t i = 0, item = 0;
      mr::pe from;
      while (c.advance(i == n)) {
        for (; i < n; ++i)
          if (!c.push(index[i] / P, mr::pe(index[i] % P))) break;
        while (c.pull(item, from)) histo[item] += 1;
      }
    }));
  };
  auto run_selector = [&] {
    t_sel.push_back(timed([&] {
      mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t slot) { histo[slot] += 1; })};
      for (auto g : index) a.send(mr::pe(g % P), g / P);
      a.done();
      a.wait();
    }));
  };
  auto run_lambda = [&] {
    t_lam.push_back(timed([&] {
      mr::actor<> l;
      for (auto g : index) {
        const std::int64_t spot = g / P;
        l.send(mr::pe(g % P), [=] { h[spot] += 1; });
      }
      l.done();
      l.wait();
    }));
  };
  // Rotate the order every repetition, so that no variant always runs first or last.
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < 3; ++k) {
      switch ((r + k) % 3) {
        case 0:
          run_conveyor();
          break;
        case 1:
          run_selector();
          break;
        default:
          run_lambda();
          break;
      }
    }
  }
  std::int64_t local = 0, total = 0;
  for (std::int64_t i = 0; i < T; ++i) local += histo[i] + h[i];
  MPI_Allreduce(&local, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (mr::this_pe().rank() == 0) {
    const double c = median(t_conv), s = median(t_sel), l = median(t_lam);
    std::printf("histogram, %d PEs, %lld updates/PE, buffer %llu B, median of %d\n", P,
                static_cast<long long>(n),
                static_cast<unsigned long long>(mr::current_config().buffer_bytes), reps);
    std::printf("  conveyor  %8.4f s  %6.2f ns/update/PE\n", c, c * 1e9 / n);
    std::printf("  selector  %8.4f s  %6.2f ns/update/PE  %.3fx conveyor\n", s, s * 1e9 / n, s / c);
    std::printf("  lambda    %8.4f s  %6.2f ns/update/PE  %.3fx selector\n", l, l * 1e9 / n, l / s);
    // Conveyor and selector count into histo, lambda into h: 3 updates per index per rep.
    const std::int64_t expect = 3 * static_cast<std::int64_t>(reps) * n * P;
    std::printf("  check     %lld of %lld updates: %s\n", static_cast<long long>(total),
                static_cast<long long>(expect), total == expect ? "PASSED" : "FAILED");
    if (total != expect) return 1;
  }
  return 0;
}
