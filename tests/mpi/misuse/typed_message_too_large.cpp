// SPDX-License-Identifier: MIT
// Misuse: a typed message larger than an aggregation buffer (MAILROOM_BUFFER_BYTES=256 from the
// test registration) must be refused with a message giving both sizes.
#include <mailroom/mailroom.hpp>

#include <array>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  using big = std::array<char, 512>;
  mr::actor<big> a([](const big&) {});
  a.send(mr::this_pe(), big{});
  a.done();
  a.wait();
  return 0;  // not reached
}
