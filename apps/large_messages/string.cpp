// SPDX-License-Identifier: MIT
// Large messages, string variant: the payload as a std::string, serialised (cereal).
#include "large_messages/large_messages.hpp"

#include <mailroom/serialized.hpp>

#include <cereal/types/string.hpp>

namespace mailroom::apps::large_messages {

void string(const problem& pb, received& r) {
  actor a{mailbox<serialized<std::string>>(
      [&r](const std::string& m) { r.add(std::as_bytes(std::span(m))); })};
  const pe next((this_pe().rank() + 1) % num_pes());
  for (std::int64_t k = 0; k < pb.messages; ++k) a.send(next, pb.text);
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::large_messages
