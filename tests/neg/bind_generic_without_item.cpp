// SPDX-License-Identifier: MIT
// Must not compile: a bound handler with an auto parameter and no item type named (it cannot be
// deduced). MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

#include <cstdint>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::selector<mr::lambdas> sel{mr::lambdas{}};
#ifdef MAILROOM_NEG_OK
  auto out = sel.bind<0, std::int64_t>([](auto v) { static_cast<void>(v); });
#else
  auto out = sel.bind<0>([](auto v) { static_cast<void>(v); });
#endif
  out.send(mr::pe(0), 1);
  sel.done<0>();
  sel.wait();
}
