// SPDX-License-Identifier: MIT
// Misuse: a malformed MAILROOM_BUFFER_BYTES (set to "abc" by the test registration) must be a
// fatal error at start-up that names the variable and the value.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  return 0;  // not reached
}
