// SPDX-License-Identifier: MIT
// Computation overlapped with communication inside a PE (docs/design.md, "Workers and tasks";
// its figures in docs/performance.md).
// One phase spawns compute-heavy tasks and runs a latency-bound exchange at the same time: K
// rounds in which every PE asks its neighbour for B table entries and starts the next round
// from the handler of the round's last reply. The same phase is also run with the tasks only
// (compute) and with the exchange only (communicate); the three alternate, and the figure is
//   both / max(compute, communicate)
// of the per-mode medians: 1.0 is perfect overlap, 2.0 none when the two take as long.
// Checks (exit 1 otherwise): every task ran once, with the same results in both phases that
// compute; every request was answered exactly once, with the owner's value.
// Usage: MAILROOM_WORKERS=2 scripts/mpirun.sh -n 2 build/tests/bench/overlap
//          [rounds] [batch] [tasks] [task_work] [reps]
#include <mailroom/mailroom.hpp>

#include <sys/resource.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace mr = mailroom;

namespace {

struct settings {
  std::int64_t rounds = 2000;  // exchange rounds per phase
  std::int64_t batch = 16;     // requests per PE per round
  std::int64_t tasks = 400;    // compute tasks per PE per phase
  std::int64_t work = 100000;  // dependent multiply-adds per task (about 0.1 ms)
  int reps = 5;
};

constexpr std::int64_t k_table = 1 << 16;  // entries per PE

std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}
// The value of entry i on PE p (what a reply must carry).
std::int64_t entry(int p, std::int64_t i) {
  return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(p) * k_table + i) >> 2);
}
// The entry requested by PE `me` as request j of round r.
std::int64_t key(int me, std::int64_t r, std::int64_t j) {
  return static_cast<std::int64_t>(mix((static_cast<std::uint64_t>(me) << 40) ^
                                       (static_cast<std::uint64_t>(r) << 20) ^
                                       static_cast<std::uint64_t>(j)) %
                                   k_table);
}
// A compute-heavy task: a chain of dependent multiply-adds, its result kept.
std::uint64_t compute(std::uint64_t seed, std::int64_t work) {
  std::uint64_t x = seed;
  for (std::int64_t i = 0; i < work; ++i) x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

enum class mode { compute, communicate, both };
const char* name(mode m) {
  return m == mode::compute ? "compute" : m == mode::communicate ? "communicate" : "both";
}

struct request {
  std::int64_t round, index;
};
struct reply {
  std::int64_t round, value;
};

double cpu_seconds() {  // of every thread of this process
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

struct outcome {
  double seconds = 0;
  double cores = 0;  // the PEs' processor time over the elapsed time: how many cores were busy
  std::vector<std::uint64_t> results;  // per task
  std::int64_t replies = 0, wrong = 0;
};

outcome run_phase(const settings& s, mode m) {
  const int me = mr::this_pe().rank();
  const int P = mr::num_pes();
  const mr::pe right((me + 1) % P);
  outcome out;
  out.results.assign(static_cast<std::size_t>(s.tasks), 0);
  // (The sums wrap: unsigned.)
  std::int64_t got = 0;
  std::uint64_t sum = 0, expected_sum = 0;
  for (std::int64_t r = 0; r < (m == mode::compute ? 0 : s.rounds); ++r)
    for (std::int64_t j = 0; j < s.batch; ++j)
      expected_sum += static_cast<std::uint64_t>(entry(right.rank(), key(me, r, j)));

  // 0: requests, answered by their owner; 1: replies; the last reply of a round starts the next.
  mr::selector ex{mr::graph{{0, 1}, {1, 0}},
                  mr::mailbox<request>([me](request q, mr::pe from, auto& self) {
                    self.template send<1>(from, reply{q.round, entry(me, q.index)});
                  }),
                  mr::mailbox<reply>([&, me, right](reply a, mr::pe, auto& self) {
                    sum += static_cast<std::uint64_t>(a.value);
                    if (++got % s.batch != 0 || a.round + 1 == s.rounds) return;
                    for (std::int64_t j = 0; j < s.batch; ++j)
                      self.template send<0>(right, request{a.round + 1, key(me, a.round + 1, j)});
                  })};
  mr::barrier();
  const double c0 = cpu_seconds();
  const double t0 = mr::wtime();
  mr::finish([&] {
    if (m != mode::compute && s.rounds > 0)
      for (std::int64_t j = 0; j < s.batch; ++j) ex.send<0>(right, request{0, key(me, 0, j)});
    ex.done<0>();
    if (m != mode::communicate)
      for (std::int64_t t = 0; t < s.tasks; ++t)
        mr::spawn([&out, &s, t, me] {
          out.results[static_cast<std::size_t>(t)] =
              compute(static_cast<std::uint64_t>(me) * 1000003 + t, s.work);
        });
  });
  ex.wait();
  const double mine = mr::wtime() - t0;
  const double cpu = cpu_seconds() - c0;
  out.seconds = mr::all_reduce(mine, mr::max<>{});
  out.cores = mr::all_reduce(cpu) / out.seconds;
  out.replies = got;
  out.wrong = sum != expected_sum ? 1 : 0;
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  settings s;
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    if (mr::this_pe().rank() == 0)
      std::printf(
          "usage: overlap [rounds=%lld] [batch=%lld] [tasks=%lld] [task_work=%lld] "
          "[reps=%d]\n",
          static_cast<long long>(s.rounds), static_cast<long long>(s.batch),
          static_cast<long long>(s.tasks), static_cast<long long>(s.work), s.reps);
    return 0;
  }
  std::int64_t* fields[] = {&s.rounds, &s.batch, &s.tasks, &s.work};
  for (int a = 1; a < argc && a <= 4; ++a) *fields[a - 1] = std::atoll(argv[a]);
  if (argc > 5) s.reps = std::atoi(argv[5]);
  if (s.rounds < 0 || s.batch < 1 || s.tasks < 0 || s.work < 0 || s.reps < 1) {
    if (mr::this_pe().rank() == 0)
      std::fprintf(stderr, "overlap: every argument must be positive (see --help)\n");
    return 2;
  }
  const int me = mr::this_pe().rank();
  const bool root = me == 0;
  if (root)
    std::printf(
        "overlap: %d PEs x %d workers; per PE: %lld rounds of %lld requests, %lld tasks "
        "of %lld multiply-adds\n",
        mr::num_pes(), mr::num_workers(), static_cast<long long>(s.rounds),
        static_cast<long long>(s.batch), static_cast<long long>(s.tasks),
        static_cast<long long>(s.work));

  std::vector<double> seconds[3], cores[3];
  int failures = 0;
  std::vector<std::uint64_t> reference;
  const mode order[] = {mode::compute, mode::communicate, mode::both};
  for (int r = 0; r < s.reps; ++r) {
    for (mode m : order) {
      outcome o = run_phase(s, m);
      seconds[static_cast<int>(m)].push_back(o.seconds);
      cores[static_cast<int>(m)].push_back(o.cores);
      const std::int64_t want_replies = m == mode::compute ? 0 : s.rounds * s.batch;
      if (o.replies != want_replies || o.wrong != 0) {
        std::fprintf(stderr, "overlap: PE %d, %s: %lld replies (expected %lld), sum %s\n", me,
                     name(m), static_cast<long long>(o.replies),
                     static_cast<long long>(want_replies), o.wrong != 0 ? "wrong" : "right");
        ++failures;
      }
      if (m == mode::communicate) continue;
      if (reference.empty()) {
        reference = o.results;
        for (std::int64_t t = 0; t < s.tasks; ++t)
          if (reference[static_cast<std::size_t>(t)] !=
              compute(static_cast<std::uint64_t>(me) * 1000003 + t, s.work)) {
            std::fprintf(stderr, "overlap: PE %d: task %lld computed a wrong result\n", me,
                         static_cast<long long>(t));
            ++failures;
            break;
          }
      } else if (o.results != reference) {
        std::fprintf(stderr, "overlap: PE %d, %s: the tasks' results differ from the first run\n",
                     me, name(m));
        ++failures;
      }
    }
    if (root)
      std::printf(
          "rep %d: compute %.4f s (%.1f cores busy), communicate %.4f s (%.1f), both "
          "%.4f s (%.1f)\n",
          r, seconds[0].back(), cores[0].back(), seconds[1].back(), cores[1].back(),
          seconds[2].back(), cores[2].back());
  }
  const double c = median(seconds[0]), x = median(seconds[1]), b = median(seconds[2]);
  if (root)
    std::printf(
        "medians: compute %.4f s, communicate %.4f s, both %.4f s; both / max = %.2f, "
        "both / sum = %.2f\n",
        c, x, b, b / std::max(c, x), b / (c + x));
  failures = mr::all_reduce(failures);
  if (root && failures > 0) std::fprintf(stderr, "overlap: %d check(s) failed\n", failures);
  return failures > 0 ? 1 : 0;
}
