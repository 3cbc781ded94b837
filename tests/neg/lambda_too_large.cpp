// SPDX-License-Identifier: MIT
// Must not compile: a lambda message whose closure is larger than 4 KiB. MAILROOM_NEG_OK builds
// the allowed twin of exactly 4 KiB.
#include <mailroom/mailroom.hpp>

#include <array>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<> l;
#ifdef MAILROOM_NEG_OK
  const std::array<char, 4096> payload{};
#else
  const std::array<char, 4097> payload{};
#endif
  l.send(mr::pe(0), [payload] { (void)payload; });
  l.done();
  l.wait();
}
