// SPDX-License-Identifier: MIT
// Must not compile: actor<T> with a handler that cannot take a T. MAILROOM_NEG_OK builds the
// allowed twin.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
#ifdef MAILROOM_NEG_OK
  mr::actor<int> a([](int) {});
#else
  mr::actor<int> a([](const char*) {});
#endif
  a.done();
  a.wait();
}
