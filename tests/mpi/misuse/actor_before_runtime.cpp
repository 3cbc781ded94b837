// SPDX-License-Identifier: MIT
// Misuse: an actor constructed before mailroom::runtime exists must fail with a message saying
// so, not crash on uninitialised state.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::actor<int> early([](int) {});
  mr::runtime rt(argc, argv);
  early.done();
  early.wait();
  return 0;  // not reached
}
