// SPDX-License-Identifier: MIT
// Large messages, record variants: the payload inside a struct of the caller's (a number and the
// vector of words), serialised with its serialize function (cereal). `record`: the general path,
// decoded into a fresh value per message. `kept`: the same struct marked reuse_decoded (its
// serialize sets both members), decoded into the value the mailbox keeps.
#include "large_messages/large_messages.hpp"

#include <mailroom/serialized.hpp>

#include <cereal/types/vector.hpp>

namespace mailroom::apps::large_messages {
namespace {
template <bool Kept>
struct record {
  std::int64_t k = 0;
  std::vector<std::uint64_t> words;
  template <class Archive>
  void serialize(Archive& ar) {
    ar(k, words);
  }
};
}  // namespace
}  // namespace mailroom::apps::large_messages

template <>
inline constexpr bool mailroom::reuse_decoded<mailroom::apps::large_messages::record<true>> = true;

namespace mailroom::apps::large_messages {
namespace {
struct records {
  record<false> fresh;
  record<true> kept;
};

template <bool Kept>
void send_records(record<Kept>& out, std::int64_t messages, received& r) {
  actor a{mailbox<serialized<record<Kept>>>(
      [&r](const record<Kept>& m) { r.add(std::as_bytes(std::span(m.words))); })};
  const pe next((this_pe().rank() + 1) % num_pes());
  for (std::int64_t k = 0; k < messages; ++k) {
    out.k = k;
    a.send(next, out);
  }
  a.done();
  a.wait();
}
}  // namespace

std::shared_ptr<void> prepare_records(const std::vector<std::uint64_t>& words) {
  return std::make_shared<records>(records{{0, words}, {0, words}});
}
void record_of(const problem& pb, received& r) {
  send_records(static_cast<records*>(pb.records.get())->fresh, pb.messages, r);
}
void kept_record_of(const problem& pb, received& r) {
  send_records(static_cast<records*>(pb.records.get())->kept, pb.messages, r);
}

}  // namespace mailroom::apps::large_messages
