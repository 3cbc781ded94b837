// SPDX-License-Identifier: MIT
// Must not compile: a mailbox whose message type owns memory. MAILROOM_NEG_OK builds the allowed
// twin with a plain message type.
#include <mailroom/mailroom.hpp>

#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  using message = int;
#else
  using message = std::string;
#endif
  mr::actor a{mr::mailbox<message>([](const message&) {})};
  a.done();
  a.wait();
}
