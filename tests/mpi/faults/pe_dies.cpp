// SPDX-License-Identifier: MIT
// Faults: the last PE dies in the middle of traffic (SIGKILL, or abort() with "abort" as the
// argument) while the others keep sending to it and waiting. The whole job must end, promptly,
// with a non-zero exit and a message that names the rank: never a hang.
#include <mailroom/mailroom.hpp>

#include <csignal>
#include <cstdlib>
#include <cstring>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const bool use_abort = argc > 1 && std::strcmp(argv[1], "abort") == 0;
  const int P = mr::num_pes(), me = mr::this_pe().rank();
  std::int64_t got = 0;
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { got += v; })};
  for (std::int64_t i = 0; i < 2'000'000; ++i) {
    if (me == P - 1 && i == 100'000) {
      if (use_abort) std::abort();
      std::raise(SIGKILL);
    }
    a.send(mr::pe(i % P), 1);
  }
  a.done();
  a.wait();
  return 0;
}
