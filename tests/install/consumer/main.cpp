// SPDX-License-Identifier: MIT
// Built against an installed mailroom: proves the exported target carries includes and MPI.
#include <mailroom/mailroom.hpp>

int main(int argc, char** argv) {
  mailroom::runtime rt(argc, argv);
  std::int64_t got = 0;
  mailroom::actor a{mailroom::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
  a.send(mailroom::this_pe(), 41);
  a.send(mailroom::this_pe(), 1);
  a.done();
  a.wait();
  return got == 42 ? 0 : 1;
}
