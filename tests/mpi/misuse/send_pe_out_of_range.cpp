// SPDX-License-Identifier: MIT
// Misuse: a send to a PE outside [0, num_pes()) must fail with a message naming the PE and the
// valid range (tests/mpi/CMakeLists.txt holds the expected text).
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  a.send(mr::pe(mr::num_pes()), 1);
  a.done();
  a.wait();
  return 0;  // not reached
}
