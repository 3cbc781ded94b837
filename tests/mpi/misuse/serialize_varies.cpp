// SPDX-License-Identifier: MIT
// Misuse: a serialize function that writes other bytes when it runs again (here, a longer
// vector each time). A large serialised message is sized by one run and written by the next, so
// the difference must stop the job at the send's line, not send a corrupt message.
#include <mailroom/mailroom.hpp>
#include <mailroom/serialized.hpp>

#include <cereal/types/vector.hpp>

#include <cstdint>
#include <vector>

namespace mr = mailroom;

namespace {
struct growing {
  mutable std::vector<std::int64_t> words = std::vector<std::int64_t>(100000);
  template <class Archive>
  void save(Archive& ar) const {
    words.push_back(1);
    ar(words);
  }
  template <class Archive>
  void load(Archive& ar) {
    ar(words);
  }
};
}  // namespace

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<mr::serialized<growing>> a([](const growing&) {});
  a.send(mr::this_pe(), growing{});
  a.done();
  a.wait();
  return 0;  // not reached
}
