// SPDX-License-Identifier: MIT
// Misuse: a send over a team to a rank outside [0, team size) must fail with a message naming
// the rank and the valid range (tests/mpi/CMakeLists.txt holds the expected text).
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  // Teams of one PE each: rank 1 is out of range there, though PE 1 exists at 2 PEs.
  const mr::team alone = mr::team::world().split(mr::this_pe().rank());
  mr::actor<int> a(alone, [](int) {});
  a.send(mr::pe(1), 1);
  a.done();
  a.wait();
  return 0;  // not reached
}
