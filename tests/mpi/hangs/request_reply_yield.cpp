// SPDX-License-Identifier: MIT
// A request/reply loop that waits for its reply with mr::yield() and never calls flush(): the
// request sits in a partly filled buffer, and only the idle flush (MAILROOM_IDLE_FLUSH polls that
// find nothing to do) ships it; the reply likewise. 200 rounds, each PE asking the next PE for a
// value that only it holds. With MAILROOM_IDLE_FLUSH=0 the first round cannot complete, and the
// watchdog must say that the request waits in a partly filled buffer.
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank(), pes = mr::num_pes();
  struct request {
    std::int64_t round;
  };
  struct reply {
    std::int64_t round, value;
  };
  std::int64_t answer = -1, answered_round = -1;
  mr::selector sel{mr::mailbox<request>([&](request r, mr::pe from, auto& self) {
                     self.template send<1>(from, reply{r.round, 1000 * me + r.round});
                   }),
                   mr::mailbox<reply>([&](reply r) {
                     answer = r.value;
                     answered_round = r.round;
                   })};
  int failures = 0;
  const int next = (me + 1) % pes;
  for (std::int64_t round = 0; round < 200; ++round) {
    sel.send<0>(mr::pe(next), request{round});
    while (answered_round != round) mr::yield();
    if (answer != 1000 * next + round) {
      std::printf("rank %d: round %lld: got %lld, expected %lld\n", me,
                  static_cast<long long>(round), static_cast<long long>(answer),
                  static_cast<long long>(1000 * next + round));
      ++failures;
    }
  }
  sel.done<0>();
  sel.wait();
  if (failures == 0 && me == 0) std::printf("request_reply_yield: PASSED\n");
  return failures == 0 ? 0 : 1;
}
