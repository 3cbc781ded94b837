// SPDX-License-Identifier: MIT
// The histogram mini-app for the driver: input, variants, and the exact checker.
#include "common/driver.hpp"
#include "histogram/histogram.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace mailroom::apps {

namespace {
class histogram_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    pb_.table_per_pe = s.table_per_pe;
    pb_.index.resize(static_cast<std::size_t>(s.n));
    input_stream in(s.seed, me);
    const std::int64_t zipf = s.options.at("zipf");
    if (zipf < 0) usage_error("histogram: --zipf must be 0 (uniform) or more");
    if (zipf == 0) {
      for (auto& g : pb_.index) g = in.below(s.table_per_pe * P);
    } else {
      // Zipf's law over the slots, slot g the (g + 1)-th most frequent: P(g) ~ 1 / (g + 1)^s,
      // s = zipf / 100, by inverting the cumulative distribution (a binary search per update).
      const std::int64_t slots = s.table_per_pe * P;
      std::vector<double> cdf(static_cast<std::size_t>(slots));
      double sum = 0;
      for (std::int64_t g = 0; g < slots; ++g)
        cdf[static_cast<std::size_t>(g)] = sum +=
            std::pow(static_cast<double>(g + 1), -zipf / 100.0);
      for (auto& g : pb_.index) {
        const double u = static_cast<double>(in.next() >> 11) * 0x1.0p-53 * sum;
        g = std::min<std::int64_t>(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin(),
                                   slots - 1);
      }
    }
    counts_ = symmetric_array<std::int64_t>(static_cast<std::size_t>(s.table_per_pe));
    // Expected counts, computed apart from every variant: every index goes to its owner (one
    // all-to-all), which counts it.
    const auto T = static_cast<std::size_t>(s.table_per_pe);
    own_.assign(T, 0);
    for (auto g : pb_.index) own_[static_cast<std::size_t>(g / P)] += 1;
    expected_.assign(T, 0);
    for (auto g : to_owners(pb_.index, [P](std::int64_t g) { return static_cast<int>(g % P); }))
      expected_[static_cast<std::size_t>(g / P)] += 1;
  }
  void reset() override { std::fill(counts_.begin(), counts_.end(), 0); }
  void run(std::string_view v) override {
    if (v == "naive")
      histogram::naive(pb_, counts_);
    else if (v == "bsp")
      histogram::bsp(pb_, counts_);
    else if (v == "conveyor")
      histogram::conveyor(pb_, counts_);
    else if (v == "selector")
      histogram::selector(pb_, counts_);
    else if (v == "lambda")
      histogram::lambda(pb_, counts_);
    else if (v == "bound")
      histogram::bound(pb_, counts_);
    else if (v == "dist")
      histogram::dist(pb_, counts_);
    else if (v == "reduce")
      histogram::reduce(pb_, counts_);
    else if (v == "counted")
      histogram::counted(pb_, counts_);
    else if (v == "local")
      histogram::local(pb_, counts_);
  }
  bool check(std::string_view v) override {
    const auto& want = v == "local" ? own_ : expected_;
    std::int64_t wrong = 0;
    for (std::size_t i = 0; i < want.size(); ++i) wrong += counts_[i] != want[i];
    return all_reduce(wrong) == 0;
  }
  // The total of the counts over every PE (every update once: the same for local).
  [[nodiscard]] std::string result() const override {
    return fmt::format("total {}",
                       all_reduce(std::reduce(counts_.begin(), counts_.end(), std::int64_t{0})));
  }
  ~histogram_bench() override {
    if (counts_.data() != nullptr) symmetric_free(counts_);
  }

 private:
  histogram::problem pb_;
  symmetric_array<std::int64_t> counts_;
  std::vector<std::int64_t> expected_, own_;
};
}  // namespace

app_info histogram_app() {
  app_info app{"histogram",
               "every PE adds 1 to random counters of a distributed table (Bale's histo)",
               "update",
               10'000'000,
               1'000,
               10'000,
               100,
               {"naive", "bsp", "conveyor", "selector", "lambda", "bound", "dist", "reduce",
                "counted", "local"},
               [] { return std::make_unique<histogram_bench>(); }};
  app.local_floor = "the same loop on this PE's own table (offset g / P): no communication";
  app.options = {{"zipf",
                  "keys by Zipf's law with exponent zipf / 100 (100: s = 1.0), slot g the (g+1)-th "
                  "most frequent; 0: uniform",
                  0, 0}};
  return app;
}

}  // namespace mailroom::apps
