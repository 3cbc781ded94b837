// SPDX-License-Identifier: MIT
// Misuse: flush() from a task on a pool worker (only worker 0 runs the runtime) must stop the job
// with the reason, not touch the aggregation buffers from two threads. Run with 2 workers.
#include <mailroom/mailroom.hpp>

#include <chrono>
#include <thread>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  // Worker 0 is slow at its pieces, so that worker 1 takes some.
  mr::parallel_for(0, 64, [&](int) {
    if (mr::this_worker() != 0)
      a.flush();
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  a.done();
  a.wait();
  return 0;  // not reached
}
