// SPDX-License-Identifier: MIT
// mr::barrier() between sends and done(): PE 0 sends many messages to the last PE while that PE
// already waits in the barrier. The barrier must keep mailroom's progress going (or the sender
// is throttled forever by back-pressure and never reaches it); a watchdog turns a hang into a
// failure with a message.
#include <mailroom/mailroom.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace mr = mailroom;

namespace {
std::atomic<int> g_stage{0};  // 0 sending, 1 in the barrier, 2 waiting, 3 done
}

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank();
  const int last = mr::num_pes() - 1;
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;

  // The watchdog only prints and exits: it never calls MPI (the runtime is single-threaded).
  std::thread([me] {
    std::this_thread::sleep_for(std::chrono::seconds(5));
    const int stage = g_stage.load();
    std::printf("rank %d: still %s after 5 s: hang\n", me,
                stage == 0   ? "sending"
                : stage == 1 ? "in mr::barrier()"
                             : "in wait()");
    std::fflush(stdout);
    std::_Exit(1);
  }).detach();

  std::int64_t got = 0;
  mr::actor<std::int64_t> a([&](std::int64_t v) { got += v; });
  if (me == 0)
    for (std::int64_t i = 0; i < n; ++i) a.send(mr::pe(last), 1);
  g_stage = 1;
  mr::barrier();
  g_stage = 2;
  a.done();
  a.wait();
  g_stage = 3;
  const std::int64_t expected = me == last ? n : 0;
  if (got != expected) {
    std::printf("rank %d: handled %lld messages, expected %lld\n", me, static_cast<long long>(got),
                static_cast<long long>(expected));
    return 1;
  }
  if (me == 0) std::printf("barrier_progress: PASSED\n");
  return 0;
}
