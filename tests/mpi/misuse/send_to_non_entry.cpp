// SPDX-License-Identifier: MIT
// Misuse: user code sending to a mailbox that only handlers feed (mailbox 1 of the default chain
// 0 -> 1) must fail with a message saying it is not an entry.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{
      mr::mailbox<int>([](int v, mr::pe from, auto& self) { self.template send<1>(from, v); }),
      mr::mailbox<int>([](int) {}).named("replies")};
  sel.send<1>(mr::this_pe(), 1);
  sel.done<0>();
  sel.wait();
  return 0;  // not reached
}
