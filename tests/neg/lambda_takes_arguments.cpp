// SPDX-License-Identifier: MIT
// Must not compile: a lambda message that takes an argument (the runtime calls it with none).
// MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<> l;
#ifdef MAILROOM_NEG_OK
  l.send(mr::pe(0), [] {});
#else
  l.send(mr::pe(0), [](int x) { (void)x; });
#endif
  l.done();
  l.wait();
}
