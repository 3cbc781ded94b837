// SPDX-License-Identifier: MIT
// Must not compile: actor<T> (handler type erased) with a message type that owns memory.
// MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  using message = long;
#else
  using message = std::string;
#endif
  mr::actor<message> a([](const message&) {});
  a.done();
  a.wait();
}
