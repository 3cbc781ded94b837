// SPDX-License-Identifier: MIT
// MAILROOM_WATCHDOG: the last PE forgets done() and only yields, so the selector can never
// terminate; every stuck PE must report the mailbox (with its counts) and the job must stop with
// a non-zero exit instead of hanging. At 1 PE the lone PE is the one that forgets.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int last = mr::num_pes() - 1;
  std::int64_t got = 0;
  mr::actor a{mr::mailbox<std::int64_t>([&](std::int64_t v) { got += v; }).named("counts")};
  a.name("tally");  // (the report names the actor and its mailbox)
  for (int p = 0; p < mr::num_pes(); ++p) a.send(mr::pe(p), 1);
  if (mr::this_pe().rank() != last) {
    a.done();
    a.wait();
  }
  for (;;) mr::yield();  // the forgetful PE: the watchdog must end this
}
