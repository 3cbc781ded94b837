// SPDX-License-Identifier: MIT
// Misuse: a lambda message whose closure (512 bytes of captures) does not fit in an aggregation
// buffer (MAILROOM_BUFFER_BYTES=256 from the test registration) must be refused with a clear
// message, as typed messages are, rather than overrun the buffer.
#include <mailroom/mailroom.hpp>

#include <array>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  auto sink = mr::symmetric_array<char>(1);
  std::array<char, 512> big{};
  big[0] = 1;
  mr::actor<> l;
  l.send(mr::this_pe(), [=] { sink[0] = big[0]; });
  l.done();
  l.wait();
  return 0;  // not reached
}
