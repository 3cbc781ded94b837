// SPDX-License-Identifier: MIT
// Must not compile: a mailbox handler that cannot take the mailbox's message type.
// MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  mr::selector sel{mr::mailbox<int>([](int, mr::pe) {}), mr::lambdas{}};
#else
  mr::selector sel{mr::mailbox<int>([](const char*, mr::pe) {}), mr::lambdas{}};
#endif
  sel.done<0>();
  sel.wait();
}
