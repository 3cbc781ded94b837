// SPDX-License-Identifier: MIT
// Misuse: done() with a run-time mailbox id that the selector does not have must fail with a
// message naming the id and the valid range.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{mr::mailbox<int>([](int) {}), mr::mailbox<int>([](int) {})};
  sel.done(5);
  sel.done<0>();
  sel.wait();
  return 0;  // not reached
}
