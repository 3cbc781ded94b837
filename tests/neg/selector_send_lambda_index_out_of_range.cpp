// SPDX-License-Identifier: MIT
// Must not compile: send<5> of a lambda message to a selector of two lambda mailboxes.
// MAILROOM_NEG_OK builds the allowed twin, send<0>.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

#ifdef MAILROOM_NEG_OK
constexpr std::size_t k_box = 0;
#else
constexpr std::size_t k_box = 5;
#endif

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector sel{mr::lambdas{}, mr::lambdas{}};
  sel.send<k_box>(mr::pe(0), [] {});
  sel.done<0>();
  sel.wait();
}
