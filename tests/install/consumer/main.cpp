// SPDX-License-Identifier: MIT
// Built against an installed mailroom: proves the exported targets carry includes and MPI, and
// that mailroom::matrix (a generator, then a gather through the public collectives) links too,
// and that the version find_package found is version.hpp's.
#include <mailroom/generators.hpp>
#include <mailroom/mailroom.hpp>

#include <cstdio>
#include <string_view>

#if MAILROOM_VERSION < 200
#error "mailroom 0.2 or later expected"
#endif

int main(int argc, char** argv) {
#ifdef FOUND_VERSION
  if (std::string_view(FOUND_VERSION) != MAILROOM_VERSION_STRING) {
    std::fprintf(stderr, "find_package found %s, version.hpp says %s\n", FOUND_VERSION,
                 MAILROOM_VERSION_STRING);
    return 1;
  }
#endif
  mailroom::runtime rt(argc, argv);
  std::int64_t got = 0;
  mailroom::actor a{mailroom::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
  a.send(mailroom::this_pe(), 41);
  a.send(mailroom::this_pe(), 1);
  a.done();
  a.wait();
  const auto whole = mailroom::erdos_renyi(100, 4, 7).gather(0);
  const bool same =
      mailroom::this_pe().rank() != 0 || whole == mailroom::reference::erdos_renyi(100, 4, 7);
  return got == 42 && same ? 0 : 1;
}
