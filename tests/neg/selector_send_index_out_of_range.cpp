// SPDX-License-Identifier: MIT
// Must not compile: send<5> to a selector of two typed mailboxes. MAILROOM_NEG_OK builds the
// allowed twin, send<1>.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

#ifdef MAILROOM_NEG_OK
constexpr std::size_t k_box = 1;
#else
constexpr std::size_t k_box = 5;
#endif

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{mr::mailbox<int>([](int) {}), mr::mailbox<int>([](int) {})};
  sel.send<k_box>(mr::pe(0), 1);
  sel.done<0>();
  sel.wait();
}
