// SPDX-License-Identifier: MIT
// RandomAccess, reductions variant (Active Pebbles' message reductions): each update is an
// at<uint64_t>{offset, ran} to its owner, to a mailbox that xors together the updates of one word
// while they wait at the sender and at every PE they pass through (xor is associative and
// commutative: the word gets the same value). The stream is uniform over the table, so the
// cache rarely finds two updates of one word and bypasses itself: this variant measures what the
// cache costs where it misses, against `counted`, the same messages to a mailbox that does not
// reduce. Under a lookahead each round's quiesce pushes what it holds, so no more than the
// round's updates wait.
#include "random_access/random_access.hpp"

namespace mailroom::apps::random_access {

namespace {
// Sends every update as at<uint64_t>{ran, offset} to the actor `a`, then waits for it.
template <class Actor>
void send_updates(const problem& pb, Actor& a) {
  const std::uint64_t mask = pb.mask();
  in_rounds(pb, [&](std::int64_t lo, std::int64_t hi) {
    parallel_for_chunks(lo, hi, [&a, &pb, mask](std::int64_t from, std::int64_t to) {
      std::uint64_t ran = starts(pb.first + from);
      for (std::int64_t i = from; i < to; ++i) {
        ran = next(ran);
        a.send(pe(pb.owner(ran)), at<std::uint64_t>{ran, ran & mask});
      }
    });
  });
  a.done();
  a.wait();
}
auto xor_into(symmetric_array<std::uint64_t> table) {
  return [table](const at<std::uint64_t>& m) { table[m.index] ^= m.value; };
}
}  // namespace

void reduce(const problem& pb, symmetric_array<std::uint64_t> table) {
  actor a{mailbox<at<std::uint64_t>>(xor_into(table)).reduce(bit_xor<>{})};
  send_updates(pb, a);
}

void counted(const problem& pb, symmetric_array<std::uint64_t> table) {
  actor a{mailbox<at<std::uint64_t>>(xor_into(table))};
  send_updates(pb, a);
}

}  // namespace mailroom::apps::random_access
