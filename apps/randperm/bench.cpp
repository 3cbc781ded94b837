// SPDX-License-Identifier: MIT
// The random-permutation mini-app for the driver: the variants, and the exact checker (every value
// of 0..N-1 exactly once over all PEs' parts).
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "randperm/randperm.hpp"

namespace mailroom::apps {

namespace {
class randperm_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    n_per_pe_ = s.n;
    seed_ = s.seed;
  }
  void reset() override { part_.clear(); }
  void run(std::string_view v) override {
    if (v == "naive")
      part_ = randperm::naive(n_per_pe_, seed_);
    else if (v == "bsp")
      part_ = randperm::bsp(n_per_pe_, seed_);
    else if (v == "conveyor")
      part_ = randperm::conveyor(n_per_pe_, seed_);
    else if (v == "selector")
      part_ = randperm::selector(n_per_pe_, seed_);
    else if (v == "lambda")
      part_ = randperm::lambda(n_per_pe_, seed_);
    else if (v == "local")
      part_ = randperm::local(n_per_pe_, seed_);
  }
  // (local's parts are permutations of each PE's own values: together, one of 0..N-1.)
  bool check(std::string_view) override {
    return is_distributed_permutation(part_, n_per_pe_ * num_pes());
  }
  // A checksum of each value at its place in the permutation (the PEs' parts in PE order).
  [[nodiscard]] std::string result() const override {
    std::int64_t at = exclusive_scan(std::ssize(part_), std::int64_t{0});
    std::uint64_t h = 0;
    for (const std::int64_t v : part_) h += element_hash(at++, v);
    return "checksum " + checksum_text(h);
  }

 private:
  std::int64_t n_per_pe_ = 0;
  std::uint64_t seed_ = 1;
  std::vector<std::int64_t> part_;
};
}  // namespace

app_info randperm_app() {
  app_info app{"randperm",
               "a uniformly random permutation by throwing darts at a distributed array "
               "(Bale's randperm)",
               "element",
               1'000'000,
               0,
               1'000,
               0,
               {"naive", "bsp", "conveyor", "selector", "lambda", "local"},
               [] { return std::make_unique<randperm_bench>(); },
               0,
               0,
               false,
               "elements"};
  app.local_floor =
      "the same throws on this PE's values alone, at its own 2n slots (offset slot / P): no "
      "communication";
  return app;
}

}  // namespace mailroom::apps
