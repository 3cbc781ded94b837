// Misuse: two selectors declared to feed each other (receives_from both ways) would each wait
// for the other to terminate: refused, with the advice to put the cycle in one selector.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  mr::actor<int> b([](int) {});
  b.receives_from(a);
  a.receives_from(b);
  return 0;  // not reached
}
