// SPDX-License-Identifier: MIT
// The index-gather mini-app for the driver: input, variants, and the exact checker.
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "index_gather/index_gather.hpp"

#include <algorithm>

namespace mailroom::apps {

namespace {
class index_gather_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    seed_ = s.seed;
    pb_.table_per_pe = s.table_per_pe;
    pb_.index.resize(static_cast<std::size_t>(s.n));
    input_stream in(s.seed, me);
    for (auto& g : pb_.index) g = in.below(s.table_per_pe * P);
    table_ = symmetric_array<std::int64_t>(static_cast<std::size_t>(s.table_per_pe));
    out_ = symmetric_array<std::int64_t>(static_cast<std::size_t>(s.n));
    for (std::int64_t l = 0; l < s.table_per_pe; ++l)
      table_[static_cast<std::size_t>(l)] = mix(static_cast<std::uint64_t>(l * P + me), seed_);
  }
  void reset() override { std::fill(out_.begin(), out_.end(), -1); }
  void run(std::string_view v) override {
    if (v == "naive")
      index_gather::naive(pb_, table_, out_);
    else if (v == "bsp")
      index_gather::bsp(pb_, table_, out_);
    else if (v == "conveyor")
      index_gather::conveyor(pb_, table_, out_);
    else if (v == "selector")
      index_gather::selector(pb_, table_, out_);
    else if (v == "lambda")
      index_gather::lambda(pb_, table_, out_);
    else if (v == "bound")
      index_gather::bound(pb_, table_, out_);
    else if (v == "dist")
      index_gather::dist(pb_, table_, out_);
    else if (v == "gather")
      index_gather::gather(pb_, table_, out_);
    else if (v == "local")
      index_gather::local(pb_, table_, out_);
  }
  bool check(std::string_view v) override {
    // Every value is recomputed from its global index: no variant's output is trusted.
    const int P = num_pes();
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < pb_.index.size(); ++i) {
      const auto g = pb_.index[i];
      const std::int64_t want = v == "local" ? table_[static_cast<std::size_t>(g / P)]
                                             : mix(static_cast<std::uint64_t>(g), seed_);
      wrong += out_[i] != want;
    }
    return all_reduce(wrong) == 0;
  }
  // A checksum of every value read at its place (PE, then index; local reads other values).
  [[nodiscard]] std::string result() const override {
    const auto n = static_cast<std::int64_t>(pb_.index.size());
    std::uint64_t h = 0;
    for (std::int64_t i = 0; i < n; ++i)
      h += element_hash(this_pe().rank() * n + i, out_[static_cast<std::size_t>(i)]);
    return "checksum " + checksum_text(h);
  }
  ~index_gather_bench() override {
    // Symmetric blocks are reclaimed in reverse order of allocation.
    if (out_.data() != nullptr) symmetric_free(out_);
    if (table_.data() != nullptr) symmetric_free(table_);
  }

 private:
  index_gather::problem pb_;
  symmetric_array<std::int64_t> table_, out_;
  std::uint64_t seed_ = 1;
};
}  // namespace

app_info index_gather_app() {
  app_info app{
      "index-gather",
      "every PE reads random elements of a distributed table (Bale's ig)",
      "read",
      10'000'000,
      100'000,
      10'000,
      1'000,
      {"naive", "bsp", "conveyor", "selector", "lambda", "bound", "dist", "gather", "local"},
      [] { return std::make_unique<index_gather_bench>(); }};
  app.local_floor = "the same loop reading this PE's own table (offset g / P): no communication";
  return app;
}

}  // namespace mailroom::apps
