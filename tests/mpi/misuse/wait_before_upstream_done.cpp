// SPDX-License-Identifier: MIT
// Misuse: wait() on a selector fed by another (receives_from) before done() on that one: it
// could never terminate. Refused at once, naming the selector that feeds it.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  mr::actor<int> b([](int) {});
  b.receives_from(a);
  b.done();
  b.wait();
  return 0;  // not reached
}
