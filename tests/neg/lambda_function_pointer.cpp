// SPDX-License-Identifier: MIT
// Must not compile: a function pointer sent as a lambda message (a code address, which differs
// from one PE to another). MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

namespace {
void hello() {}
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<> l;
#ifdef MAILROOM_NEG_OK
  l.send(mr::pe(0), [] { hello(); });
#else
  l.send(mr::pe(0), &hello);
#endif
  l.done();
  l.wait();
}
