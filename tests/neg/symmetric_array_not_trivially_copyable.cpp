// SPDX-License-Identifier: MIT
// Must not compile: a symmetric array of an owning type. MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  mr::symmetric_array<int> a(10);
#else
  mr::symmetric_array<std::string> a(10);
#endif
  mr::symmetric_free(a);
}
