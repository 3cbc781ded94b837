// SPDX-License-Identifier: MIT
// Selectors constructed in a different order on different PEs: PE 0 constructs one of 8-byte
// messages and then one of 16-byte messages, the other PEs the other way round. Each PE sends on
// its first selector to every other PE. The first buffer that arrives for a mailbox that is
// something else on the receiver must stop the job with both PEs' views, not hang or run the
// wrong handler. (At 1 PE nothing can differ: the test runs at 2 PEs and up.)
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <optional>

namespace mr = mailroom;

namespace {
struct pair16 {
  std::int64_t a, b;
};
std::int64_t g_sum = 0;
void handle_long(std::int64_t v) { g_sum += v; }
void handle_pair(pair16 p) { g_sum += p.a + p.b; }
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const int me = mr::this_pe().rank(), pes = mr::num_pes();
  using longs = mr::actor<std::int64_t, void (*)(std::int64_t)>;
  using pairs = mr::actor<pair16, void (*)(pair16)>;
  std::optional<longs> l;
  std::optional<pairs> p;
  if (me == 0) {
    l.emplace(mr::mailbox<std::int64_t>(&handle_long));
    p.emplace(mr::mailbox<pair16>(&handle_pair));
    for (int d = 0; d < pes; ++d) l->send(mr::pe(d), 1);
  } else {
    p.emplace(mr::mailbox<pair16>(&handle_pair));
    l.emplace(mr::mailbox<std::int64_t>(&handle_long));
    for (int d = 0; d < pes; ++d) p->send(mr::pe(d), pair16{1, 2});
  }
  l->done();
  p->done();
  l->wait();
  p->wait();
  std::printf("rank %d: selectors_swapped: no error reported (sum %lld)\n", me,
              static_cast<long long>(g_sum));
  return 0;
}
