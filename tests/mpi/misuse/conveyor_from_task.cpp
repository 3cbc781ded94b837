// SPDX-License-Identifier: MIT
// Misuse: a conveyor driven from a task on a pool worker (a conveyor is worker 0's: its buffers
// are not shared between threads) must stop the job with the reason. Run with 2 workers.
#include <mailroom/mailroom.hpp>

#include <chrono>
#include <thread>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::conveyor<int> c;
  // Worker 0 is slow at its pieces, so that worker 1 takes some.
  mr::parallel_for(0, 64, [&](int) {
    if (mr::this_worker() != 0)
      (void)c.advance(false);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  while (c.advance(true)) {
  }
  return 0;  // not reached
}
