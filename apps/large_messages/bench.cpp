// SPDX-License-Identifier: MIT
// The large-messages mini-app for the driver: the payload, the variants and the exact checker
// (every PE's received checksum against its sender's payload, folded the same way).
#include "common/driver.hpp"
#include "large_messages/large_messages.hpp"

#include <fmt/format.h>

namespace mailroom::apps {

namespace {
// PE p's payload: `words` words of its input stream.
std::vector<std::uint64_t> payload(std::uint64_t seed, int p, std::size_t words) {
  std::vector<std::uint64_t> w(words);
  input_stream in(seed, p);
  for (auto& x : w) x = in.next();
  return w;
}

class large_messages_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    const std::int64_t bytes = s.options.at("bytes");
    if (bytes < 8 || bytes % 8 != 0)
      usage_error(fmt::format(
          "large-messages: --bytes {} must be a positive multiple of 8 (the vector variant "
          "sends 64-bit words)",
          bytes));
    // The payload as words, as a string and in the two records, the previous PE's to check
    // against, and what the receiving mailbox keeps (its reassembly buffer and a decoded value):
    // about 7 copies.
    const double need = 7.0 * static_cast<double>(bytes);
    const double have = physical_memory_bytes();
    if (need > have)
      usage_error(fmt::format(
          "large-messages: --bytes {} needs about {:.1f} GiB per PE; this machine has {:.1f} GiB",
          bytes, need / (1 << 30), have / (1 << 30)));
    bytes_ = bytes;
    pb_.messages = s.n;
    pb_.words = payload(s.seed, me, static_cast<std::size_t>(bytes / 8));
    pb_.text.assign(reinterpret_cast<const char*>(pb_.words.data()),
                    static_cast<std::size_t>(bytes));
    pb_.records = large_messages::prepare_records(pb_.words);
    // What arrives from the previous PE: its payload, s.n times (the checksum is linear).
    large_messages::received one;
    const std::vector<std::uint64_t> from = payload(s.seed, (me + P - 1) % P, pb_.words.size());
    one.add(std::as_bytes(std::span(from)));
    expected_ = {one.messages * s.n, one.bytes * s.n, one.sum * static_cast<std::uint64_t>(s.n),
                 one.weighted * static_cast<std::uint64_t>(s.n)};
  }
  void reset() override { got_ = {}; }
  void run(std::string_view v) override {
    if (v == "span")
      large_messages::span(pb_, got_);
    else if (v == "string")
      large_messages::string(pb_, got_);
    else if (v == "vector")
      large_messages::vector(pb_, got_);
    else if (v == "record")
      large_messages::record_of(pb_, got_);
    else if (v == "kept")
      large_messages::kept_record_of(pb_, got_);
  }
  bool check(std::string_view) override {
    return all_reduce(std::int64_t{got_ == expected_ ? 0 : 1}) == 0;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return pb_.messages * bytes_; }
  // The messages and bytes received over every PE.
  [[nodiscard]] std::string result() const override {
    return fmt::format("messages {}, bytes {}", all_reduce(got_.messages), all_reduce(got_.bytes));
  }

 private:
  large_messages::problem pb_;
  large_messages::received got_, expected_;
  std::int64_t bytes_ = 0;
};
}  // namespace

app_info large_messages_app() {
  app_info app{"large-messages",
               "every PE sends one payload of --bytes, n times, to the next PE: as bytes and as "
               "serialised values (cereal)",
               "byte",
               4,
               0,
               2,
               0,
               {"span", "string", "vector", "record", "kept"},
               [] { return std::make_unique<large_messages_bench>(); }};
  app.n_means = "messages";
  app.baseline = "span";
  app.options = {{"bytes", "bytes per message (a multiple of 8)", 50'000'000, 2'000'000}};
  app.rate = {"GB/s", 1e-9};
  return app;
}

}  // namespace mailroom::apps
