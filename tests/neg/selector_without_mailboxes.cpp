// SPDX-License-Identifier: MIT
// Must not compile: a selector with no mailbox. MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  mr::selector<mr::lambdas> sel{mr::lambdas{}};
#else
  mr::selector<> sel;
#endif
  sel.wait();
}
