// Misuse: a send over a team to a rank outside [0, team size) must fail with a message naming
// the rank and the valid range (tests/mpi/CMakeLists.txt holds the expected text).
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const mr::team all = mr::team::world().split(0);
  mr::actor<int> a(all, [](int) {});
  a.send(mr::pe(all.size()), 1);
  a.done();
  a.wait();
  return 0;  // not reached
}
