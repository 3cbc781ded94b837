// SPDX-License-Identifier: MIT
// Misuse: wait() before done() on an entry mailbox could never return; it must fail at once
// with a message naming the mailbox, not hang.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<int> a([](int) {});
  a.send(mr::this_pe(), 1);
  a.wait();
  return 0;  // not reached
}
