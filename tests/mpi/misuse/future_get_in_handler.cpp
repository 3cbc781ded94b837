// SPDX-License-Identifier: MIT
// Misuse: a blocking get() on a future inside a handler (handlers never block) must stop the job
// with a message that says to use then(), naming the line of the get() (11), not hang.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::promise<int> never;
  mr::actor<int> a([&](int) { (void)never.get_future().get(); });
  a.send(mr::this_pe(), 1);
  a.done();
  a.wait();
  return 0;  // not reached
}
