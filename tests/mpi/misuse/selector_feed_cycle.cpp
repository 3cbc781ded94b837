// SPDX-License-Identifier: MIT
// Misuse: selectors that feed each other around a cycle terminate together by quiescence waves
// of their own, among the job's PEs; a cycle through a selector over a team is refused, with
// the advice to put the cycle in one selector.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const mr::team all = mr::team::world().split(0);  // every PE, but a team of its own
  mr::actor<int> a([](int) {});
  mr::selector b(all, mr::mailbox<int>([](int) {}));
  b.receives_from(a);
  a.receives_from(b);
  return 0;  // not reached
}
