// SPDX-License-Identifier: MIT
// Large messages, record variant: the payload inside a struct of the caller's (a number and the
// vector of words), serialised with its serialize function (cereal): the general path, decoded
// into a fresh value per message.
#include "large_messages/large_messages.hpp"

#include <mailroom/serialized.hpp>

#include <cereal/types/vector.hpp>

namespace mailroom::apps::large_messages {

namespace {
struct record {
  std::int64_t k = 0;
  std::vector<std::uint64_t> words;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(k, words);
  }
};
}  // namespace

void record_of(const problem& pb, received& r) {
  actor a{mailbox<serialized<record>>(
      [&r](const record& m) { r.add(std::as_bytes(std::span(m.words))); })};
  const pe next((this_pe().rank() + 1) % num_pes());
  record out{0, pb.words};
  for (std::int64_t k = 0; k < pb.messages; ++k) {
    out.k = k;
    a.send(next, out);
  }
  a.done();
  a.wait();
}

}  // namespace mailroom::apps::large_messages
