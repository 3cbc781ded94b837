// SPDX-License-Identifier: MIT
// Must not compile: a conveyor of an owning type. MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  mr::conveyor<int> c;
#else
  mr::conveyor<std::string> c;
#endif
  while (c.advance(true)) {
  }
}
