// SPDX-License-Identifier: MIT
// Large messages, span variant: the payload's bytes as one variable-size message (span_of).
#include "large_messages/large_messages.hpp"

namespace mailroom::apps::large_messages {

void span(const problem& pb, received& r) {
  actor a{mailbox<span_of<std::byte>>([&r](std::span<const std::byte> m) { r.add(m); })};
  const pe next((this_pe().rank() + 1) % num_pes());
  const std::span<const std::byte> bytes = std::as_bytes(std::span(pb.words));
  for (std::int64_t k = 0; k < pb.messages; ++k) a.send(next, bytes);
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::large_messages
