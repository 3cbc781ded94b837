// SPDX-License-Identifier: MIT
// The reductions mini-app for the driver: input, the computation every variant shares, and the
// exact checker (a closed form of the sum over PEs, so the check costs O(n), not O(n P)).
#include "common/driver.hpp"
#include "reductions/reductions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace mailroom::apps {

namespace reductions {
void compute(const problem& pb, std::int64_t part, std::span<std::int64_t> y) {
  const std::int64_t* x = pb.x.data() + pb.begin(part);
  const std::size_t n = y.size();
  // The imbalance: passes of additions whose results are overwritten (the barrier keeps the
  // compiler from dropping or merging them).
  const std::int64_t extra = pb.extra.empty() ? 0 : pb.extra[static_cast<std::size_t>(part)];
  for (std::int64_t r = 0; r < extra; ++r) {
    for (std::size_t i = 0; i < n; ++i) y[i] = x[i] + r;
    asm volatile("" : : "r"(y.data()) : "memory");
  }
  for (std::size_t i = 0; i < n; ++i) y[i] = x[i] + pb.addend;
}
}  // namespace reductions

namespace {
// PE p's element i: the sum over PEs then has a closed form.
std::int64_t element(std::int64_t p, std::int64_t i) { return i + p * (i % 7); }

class reductions_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int me = this_pe().rank();
    pb_.partitions = s.options.at("partitions");
    MAILROOM_CHECK(pb_.partitions >= 1 && pb_.partitions <= std::max<std::int64_t>(s.n, 1),
                   "reductions: --partitions {} must be in [1, n = {}]", pb_.partitions, s.n);
    pb_.x.resize(static_cast<std::size_t>(s.n));
    for (std::int64_t i = 0; i < s.n; ++i) pb_.x[static_cast<std::size_t>(i)] = element(me, i);
    pb_.addend = static_cast<std::int64_t>(s.seed % 1000);
    const std::int64_t imbalance = s.options.at("imbalance");
    pb_.extra.assign(static_cast<std::size_t>(pb_.partitions), 0);
    input_stream in(s.seed, me);
    if (imbalance > 0)
      for (auto& e : pb_.extra) e = in.below(imbalance + 1);
    sum_.assign(pb_.x.size(), 0);
  }
  void reset() override { std::fill(sum_.begin(), sum_.end(), -1); }
  void run(std::string_view v) override {
    if (v == "blocking")
      reductions::blocking(pb_, sum_);
    else if (v == "blocking-k1")
      reductions::blocking_k1(pb_, sum_);
    else if (v == "pipelined")
      reductions::pipelined(pb_, sum_);
  }
  bool check(std::string_view) override {
    const std::int64_t P = num_pes();
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < sum_.size(); ++i) {
      const auto g = static_cast<std::int64_t>(i);
      wrong += sum_[i] != P * g + (g % 7) * (P * (P - 1) / 2) + P * pb_.addend;
    }
    return all_reduce(wrong) == 0;
  }
  // The total of the summed elements (every PE holds the same sums).
  [[nodiscard]] std::string result() const override {
    return fmt::format("total {}", std::reduce(sum_.begin(), sum_.end(), std::int64_t{0}));
  }

 private:
  reductions::problem pb_;
  std::vector<std::int64_t> sum_;
};
}  // namespace

app_info reductions_app() {
  app_info a{"reductions",
             "each PE computes k partitions of n elements and sums each over all PEs "
             "(Charm++'s concurrent reductions)",
             "element",
             40'960,
             0,
             4'096,
             0,
             {"blocking", "blocking-k1", "pipelined"},
             [] { return std::make_unique<reductions_bench>(); }};
  a.n_means = "elements";
  a.baseline = "blocking";
  a.options = {{"partitions", "k: partitions of the n elements, each reduced on its own", 160, 16},
               {"imbalance",
                "extra work per partition and PE: a random number of passes in [0, W] over the "
                "partition (0: none)",
                0, 100}};
  return a;
}

}  // namespace mailroom::apps
