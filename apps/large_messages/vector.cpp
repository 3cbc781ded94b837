// SPDX-License-Identifier: MIT
// Large messages, vector variant: the payload as a std::vector of 64-bit words, serialised
// (cereal).
#include "large_messages/large_messages.hpp"

#include <mailroom/serialized.hpp>

#include <cereal/types/vector.hpp>

namespace mailroom::apps::large_messages {

void vector(const problem& pb, received& r) {
  actor a{mailbox<serialized<std::vector<std::uint64_t>>>(
      [&r](const std::vector<std::uint64_t>& m) { r.add(std::as_bytes(std::span(m))); })};
  const pe next((this_pe().rank() + 1) % num_pes());
  for (std::int64_t k = 0; k < pb.messages; ++k) a.send(next, pb.words);
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::large_messages
