// SPDX-License-Identifier: MIT
// A join whose key arrives on one input only: when the selector terminates, that message can
// never be matched, and the job must stop naming the join, the count and the key.
#include <mailroom/join.hpp>
#include <mailroom/mailroom.hpp>

#include <cstdint>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  auto j = mr::make_join<std::int64_t, std::int64_t>([](std::int64_t k) { return k; },
                                                     [](std::int64_t, std::int64_t) {});
  mr::selector sel{mr::graph({}, {0, 1}), mr::mailbox<std::int64_t>(j.input<0>()),
                   mr::mailbox<std::int64_t>(j.input<1>())};
  if (mr::this_pe().rank() == 0) {
    sel.send<0>(mr::pe(0), 5);  // matched
    sel.send<1>(mr::pe(0), 5);
    sel.send<0>(mr::pe(0), 7);  // never matched
  }
  sel.done<0>();
  sel.done<1>();
  sel.wait();
}
