// SPDX-License-Identifier: MIT
// Histogram, reductions variant (Active Pebbles' message reductions): each update is an
// at<int64_t>{1, slot} sent by global index, to a mailbox that adds the counts of updates to one
// slot while they wait at the sender, so that a slot updated again before its buffer leaves
// costs no message. `counted`: the same messages to a mailbox that does not reduce.
#include "histogram/histogram.hpp"

#include <span>

namespace mailroom::apps::histogram {

namespace {
// Sends every update as at<int64_t>{1, slot} to the actor `a`, then waits for it.
template <class Actor>
void send_counts(const problem& pb, Actor& a) {
  const cyclic table(pb.table_per_pe * num_pes());
  parallel_for_chunks(std::size_t{0}, pb.index.size(),
                      [&a, &pb, table](std::size_t lo, std::size_t hi) {
                        for (const std::int64_t g : std::span(pb.index).subspan(lo, hi - lo))
                          a.send(table, g, 1);
                      });
  a.done();
  a.wait();
}
auto add_counts(symmetric_array<std::int64_t> counts) {
  return [counts](const at<std::int64_t>& m) { counts[m.index] += m.value; };
}
}  // namespace

void reduce(const problem& pb, symmetric_array<std::int64_t> counts) {
  actor a{mailbox<at<std::int64_t>>(add_counts(counts)).reduce(plus<>{})};
  send_counts(pb, a);
}

void counted(const problem& pb, symmetric_array<std::int64_t> counts) {
  actor a{mailbox<at<std::int64_t>>(add_counts(counts))};
  send_counts(pb, a);
}

}  // namespace mailroom::apps::histogram
