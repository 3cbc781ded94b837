// SPDX-License-Identifier: MIT
// Misuse: sending to a mailbox after this PE called done() on it must fail clearly (not be lost,
// not hang).
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  a.send(mr::this_pe(), 1);
  a.done();
  a.send(mr::this_pe(), 2);
  a.wait();
  return 0;  // not reached
}
