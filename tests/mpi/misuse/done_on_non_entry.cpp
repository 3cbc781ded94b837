// SPDX-License-Identifier: MIT
// Misuse: done() on a mailbox fed only by handlers (mailbox 1 of the default chain 0 -> 1) must
// fail with a message saying the runtime closes it.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{
      mr::mailbox<int>([](int v, mr::pe from, auto& self) { self.template send<1>(from, v); }),
      mr::mailbox<int>([](int) {})};
  sel.done<0>();
  sel.done<1>();
  sel.wait();
  return 0;  // not reached
}
