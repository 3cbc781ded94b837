// SPDX-License-Identifier: MIT
// The random-permutation mini-app for the driver: the variants, and the exact checker (every value
// of 0..N-1 exactly once over all PEs' parts).
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
  }
  bool check(std::string_view) override {
    return is_distributed_permutation(part_, n_per_pe_ * num_pes());
  }

 private:
  std::int64_t n_per_pe_ = 0;
  std::uint64_t seed_ = 1;
  std::vector<std::int64_t> part_;
};
}  // namespace

app_info randperm_app() {
  return {"randperm",
          "a uniformly random permutation by throwing darts at a distributed array "
          "(Bale's randperm)",
          "element",
          1'000'000,
          0,
          1'000,
          0,
          {"naive", "bsp", "conveyor", "selector", "lambda"},
          [] { return std::make_unique<randperm_bench>(); },
          0,
          0,
          false,
          "elements"};
}

}  // namespace mailroom::apps
