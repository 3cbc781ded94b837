// SPDX-License-Identifier: MIT
// Misuse: a collective called from a handler (collectives are started by every member in the
// same order from user code) must stop the job naming the collective's own line, 13 (the test
// checks that number), not the wait() that ran the handler.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  int sum = 0;
  mr::actor<int> a([&](int v) {
    sum += mr::all_reduce(v);  // line 13
  });
  a.send(mr::this_pe(), 1);
  a.done();
  a.wait();
  return sum == 0 ? 0 : 1;  // not reached
}
