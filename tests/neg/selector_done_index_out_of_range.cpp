// SPDX-License-Identifier: MIT
// Must not compile: done<5> on a selector of two mailboxes. MAILROOM_NEG_OK builds the allowed
// twin, done<0>.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

#ifdef MAILROOM_NEG_OK
constexpr std::size_t k_box = 0;
#else
constexpr std::size_t k_box = 5;
#endif

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{mr::mailbox<int>([](int) {}), mr::mailbox<int>([](int) {})};
  sel.done<k_box>();
  sel.wait();
}
