// SPDX-License-Identifier: MIT
// The task pool against oneTBB's (docs/design.md, "The pool is written here"): the cost per task
// of spawning N small tasks and waiting for them (mr::finish + mr::spawn against
// tbb::task_group run + wait), and a parallel loop over an array (mr::parallel_for_chunks
// against tbb::parallel_for), with as many TBB threads as the PE has workers. Prints one line per
// measurement; checks that every task ran and the sums agree (exit 1 otherwise).
// Usage: MAILROOM_WORKERS=2 scripts/mpirun.sh -n 1 build/tests/bench/tasks_vs_tbb [tasks] [reps]
#include <mailroom/mailroom.hpp>

#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/task_group.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <thread>
#include <vector>

namespace mr = mailroom;

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F>
double best_of(int reps, F&& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const double t0 = now();
    f();
    best = std::min(best, now() - t0);
  }
  return best;
}

// A small task: a few dozen instructions of work on its own counter.
std::uint64_t work(std::uint64_t x) {
  for (int i = 0; i < 16; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 5;
  const int workers = mr::num_workers();
  int failures = 0;

  // Spawn and join: N independent tasks.
  std::atomic<std::uint64_t> sink{0};
  std::atomic<std::int64_t> ran{0};
  const auto body = [&](std::int64_t i) {
    sink.fetch_add(work(static_cast<std::uint64_t>(i)) & 1, std::memory_order_relaxed);
    ran.fetch_add(1, std::memory_order_relaxed);
  };
  const double t_mr = best_of(reps, [&] {
    mr::finish([&] {
      for (std::int64_t i = 0; i < n; ++i) mr::spawn([&body, i] { body(i); });
    });
  });
  failures += ran.load() != n * reps;
  // Let the idle pool workers fall asleep before TBB's threads start.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ran = 0;
  const tbb::global_control threads(tbb::global_control::max_allowed_parallelism,
                                    static_cast<std::size_t>(workers));
  const double t_tbb = best_of(reps, [&] {
    tbb::task_group g;
    for (std::int64_t i = 0; i < n; ++i) g.run([&body, i] { body(i); });
    g.wait();
  });
  failures += ran.load() != n * reps;
  std::printf(
      "spawn+join %lld tasks, %d workers: mailroom %.1f ns/task, oneTBB task_group "
      "%.1f ns/task (mailroom/tbb %.2f)\n",
      static_cast<long long>(n), workers, t_mr / static_cast<double>(n) * 1e9,
      t_tbb / static_cast<double>(n) * 1e9, t_mr / t_tbb);

  // A parallel loop: the sum of work(i) over [0, 16 N).
  const std::int64_t m = 16 * n;
  std::vector<std::uint64_t> part(static_cast<std::size_t>(workers) * 8, 0);
  std::uint64_t sum_mr = 0, sum_tbb = 0;
  const double l_mr = best_of(reps, [&] {
    std::atomic<std::uint64_t> total{0};
    mr::parallel_for_chunks(std::int64_t{0}, m, [&](std::int64_t lo, std::int64_t hi) {
      std::uint64_t s = 0;
      for (std::int64_t i = lo; i < hi; ++i) s += work(static_cast<std::uint64_t>(i)) >> 40;
      total.fetch_add(s, std::memory_order_relaxed);
    });
    sum_mr = total.load();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double l_tbb = best_of(reps, [&] {
    std::atomic<std::uint64_t> total{0};
    tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, m), [&](const auto& r) {
      std::uint64_t s = 0;
      for (std::int64_t i = r.begin(); i < r.end(); ++i)
        s += work(static_cast<std::uint64_t>(i)) >> 40;
      total.fetch_add(s, std::memory_order_relaxed);
    });
    sum_tbb = total.load();
  });
  failures += sum_mr != sum_tbb;
  std::printf(
      "parallel loop over %lld elements, %d workers: mailroom %.2f ns/element, oneTBB "
      "parallel_for %.2f ns/element (mailroom/tbb %.2f)\n",
      static_cast<long long>(m), workers, l_mr / static_cast<double>(m) * 1e9,
      l_tbb / static_cast<double>(m) * 1e9, l_mr / l_tbb);
  if (failures != 0) std::printf("FAILED: tasks lost or sums differ\n");
  return failures != 0 ? 1 : 0;
}
