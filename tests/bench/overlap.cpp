// SPDX-License-Identifier: MIT
// Computation overlapped with communication inside a PE (docs/design.md, "Workers and tasks"
// and "Progress while computing"; its figures in docs/performance.md).
// One phase spawns compute-heavy tasks and runs an exchange at the same time, either
//  - latency-bound (the default): K rounds in which every PE asks its neighbour for B table
//    entries and starts the next round from the handler of the round's last reply; or
//  - bandwidth-bound (--bulk MIB): every PE sends MIB MiB to its neighbour in 64-byte messages,
//    each task sending its share once it has computed (a pipeline: compute, then send), so that
//    the wire carries one task's share while the next computes. Across emulated hosts whose
//    links are rate-limited (scripts/cluster --rate) the wire leaves the CPUs free meanwhile.
// The same phase is also run with the tasks only (compute) and with the exchange only
// (communicate); the three alternate, and the figure is
//   both / max(compute, communicate)
// of the per-mode medians: 1.0 is perfect overlap, 2.0 none when the two take as long.
// Checks (exit 1 otherwise): every task ran once, with the same results in both phases that
// compute; every request was answered exactly once, with the owner's value; every bulk message
// arrived once, with its content.
// Usage: MAILROOM_WORKERS=2 scripts/mpirun.sh -n 2 build/tests/bench/overlap
//          [--bulk MIB] [--no-progress] [rounds] [batch] [tasks] [task_work] [reps]
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
  double bulk_mib = 0;  // > 0: the bandwidth-bound exchange, MiB per PE
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
// Whether the tasks call mailroom::progress() (--no-progress: not; with one worker, only a
// progress thread, MAILROOM_PROGRESS=thread, then moves the messages while they compute).
bool g_progress_calls = true;

// A compute-heavy task: a chain of dependent multiply-adds, its result kept. It lets the PE's
// messages move every 4096 steps (mailroom::progress: with one worker, the tasks run on the
// thread that also runs the communication).
std::uint64_t compute(std::uint64_t seed, std::int64_t work) {
  std::uint64_t x = seed;
  for (std::int64_t i = 0; i < work; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if ((i & 4095) == 4095 && g_progress_calls) mr::progress();
  }
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
// A message of the bulk exchange: its index among the sender's, and words made from it.
struct bulk {
  std::int64_t index;
  std::uint64_t words[7];
};
bulk bulk_message(int from, std::int64_t index) {
  bulk b{index, {}};
  for (std::uint64_t& w : b.words)
    w = mix((static_cast<std::uint64_t>(from) << 48) ^ static_cast<std::uint64_t>(index) ^
            (static_cast<std::uint64_t>(&w - b.words) << 40));
  return b;
}
std::uint64_t bulk_sum(const bulk& b) {
  std::uint64_t x = static_cast<std::uint64_t>(b.index);
  for (std::uint64_t w : b.words) x += w;
  return x;
}

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
  for (std::int64_t r = 0; r < (m == mode::compute || s.bulk_mib > 0 ? 0 : s.rounds); ++r)
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
  // The bulk exchange: what arrived from the left neighbour, and what should have.
  const bool bulk_mode = s.bulk_mib > 0;
  const auto bulk_n = static_cast<std::int64_t>(s.bulk_mib * 1024 * 1024 / sizeof(bulk));
  const int left = (me + P - 1) % P;
  std::int64_t bulk_got = 0;
  std::uint64_t bulk_check = 0, bulk_expected = 0;
  if (bulk_mode && m != mode::compute)
    for (std::int64_t i = 0; i < bulk_n; ++i) bulk_expected += bulk_sum(bulk_message(left, i));
  mr::actor<bulk> flow([&](const bulk& b) {
    bulk_check += bulk_sum(b);
    ++bulk_got;
  });
  // Task t's share of the bulk messages: [first(t), first(t + 1)).
  const std::int64_t shares = std::max<std::int64_t>(s.tasks, 1);
  const auto first = [&](std::int64_t t) { return bulk_n * t / shares; };
  const auto send_share = [&, me, right](std::int64_t t) {
    for (std::int64_t i = first(t); i < first(t + 1); ++i) flow.send(right, bulk_message(me, i));
  };
  mr::barrier();
  const double c0 = cpu_seconds();
  const double t0 = mr::wtime();
  mr::finish([&] {
    if (!bulk_mode && m != mode::compute && s.rounds > 0)
      for (std::int64_t j = 0; j < s.batch; ++j) ex.send<0>(right, request{0, key(me, 0, j)});
    ex.done<0>();
    for (std::int64_t t = 0; t < (m == mode::communicate && !bulk_mode ? 0 : shares); ++t)
      mr::spawn([&, t, me] {
        if (m != mode::communicate && t < s.tasks)
          out.results[static_cast<std::size_t>(t)] =
              compute(static_cast<std::uint64_t>(me) * 1000003 + t, s.work);
        if (bulk_mode && m != mode::compute) send_share(t);
      });
  });
  flow.done();
  ex.wait();
  flow.wait();
  const double mine = mr::wtime() - t0;
  const double cpu = cpu_seconds() - c0;
  out.seconds = mr::all_reduce(mine, mr::max<>{});
  out.cores = mr::all_reduce(cpu) / out.seconds;
  out.replies = bulk_mode ? bulk_got : got;
  out.wrong = sum != expected_sum || bulk_check != bulk_expected ? 1 : 0;
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
  for (;;) {
    if (argc > 2 && std::strcmp(argv[1], "--bulk") == 0) {
      s.bulk_mib = std::atof(argv[2]);
      if (s.bulk_mib <= 0) {
        if (mr::this_pe().rank() == 0)
          std::fprintf(stderr, "overlap: --bulk takes the MiB each PE sends, above 0\n");
        return 2;
      }
      argv[2] = argv[0];
      argv += 2;
      argc -= 2;
    } else if (argc > 1 && std::strcmp(argv[1], "--no-progress") == 0) {
      g_progress_calls = false;
      argv[1] = argv[0];
      argv += 1;
      argc -= 1;
    } else {
      break;
    }
  }
  if (argc > 1 && (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0)) {
    if (mr::this_pe().rank() == 0)
      std::printf(
          "usage: overlap [--bulk MIB] [--no-progress] [rounds=%lld] [batch=%lld] "
          "[tasks=%lld] [task_work=%lld] [reps=%d]\n"
          "  --no-progress: the tasks do not call mailroom::progress()\n",
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
  if (root && s.bulk_mib > 0)
    std::printf(
        "overlap: %d PEs x %d workers (MAILROOM_PROGRESS=%s%s); per PE: %.1f MiB to its "
        "neighbour in %zu-byte messages, sent by %lld tasks of %lld multiply-adds each\n",
        mr::num_pes(), mr::num_workers(), mr::progress_mode_name(rt.config().progress),
        g_progress_calls ? "" : ", no progress() calls", s.bulk_mib, sizeof(bulk),
        static_cast<long long>(s.tasks), static_cast<long long>(s.work));
  else if (root)
    std::printf(
        "overlap: %d PEs x %d workers (MAILROOM_PROGRESS=%s%s); per PE: %lld rounds of %lld "
        "requests, %lld tasks of %lld multiply-adds\n",
        mr::num_pes(), mr::num_workers(), mr::progress_mode_name(rt.config().progress),
        g_progress_calls ? "" : ", no progress() calls", static_cast<long long>(s.rounds),
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
      const std::int64_t want_replies =
          m == mode::compute ? 0
          : s.bulk_mib > 0   ? static_cast<std::int64_t>(s.bulk_mib * 1024 * 1024 / sizeof(bulk))
                             : s.rounds * s.batch;
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
