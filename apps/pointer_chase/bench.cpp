// SPDX-License-Identifier: MIT
// The PointerChase mini-app for the driver: the ring, the variants, and the checker (every PE
// handled exactly chains x hops hops, and the chains that ended on it came from the PE `hops`
// steps back on the ring).
#include "common/driver.hpp"
#include "pointer_chase/pointer_chase.hpp"

#include <fmt/format.h>

#include <numeric>
#include <random>
#include <utility>
#include <vector>

namespace mailroom::apps {

namespace {

class pointer_chase_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    if (s.n < 1) usage_error("pointer-chase: -n (hops per chain) must be at least 1");
    pb_.hops = s.n;
    pb_.chains = s.options.at("chains");
    if (pb_.chains < 1) usage_error("pointer-chase: --chains must be at least 1");
    // One random cycle through the PEs (Sattolo's algorithm), the same on every PE.
    std::vector<int> succ(static_cast<std::size_t>(P));
    std::iota(succ.begin(), succ.end(), 0);
    std::mt19937_64 rng(s.seed);
    for (int i = P - 1; i > 0; --i)
      std::swap(succ[i], succ[static_cast<std::size_t>(rng() % static_cast<std::uint64_t>(i))]);
    std::vector<int> pred(succ.size());
    for (int p = 0; p < P; ++p) pred[succ[p]] = p;
    int from = me;
    for (std::int64_t h = 0; h < pb_.hops % P; ++h) from = pred[from];
    origin_ = from;
    pb_.next = symmetric_array<int>(1);
    pb_.next[0] = succ[me];
    pb_.handled = symmetric_array<std::int64_t>(1);
    pb_.ended = symmetric_array<std::int64_t>(1);
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return pb_.chains * pb_.hops; }
  void reset() override {
    pb_.handled[0] = 0;
    pb_.ended[0] = 0;
  }
  void run(std::string_view v) override {
    if (v == "naive")
      pointer_chase::naive(pb_);
    else if (v == "conveyor")
      pointer_chase::conveyor(pb_);
    else if (v == "selector")
      pointer_chase::selector(pb_);
    else if (v == "lambda")
      pointer_chase::lambda(pb_);
    else if (v == "local")
      pointer_chase::local(pb_);
  }
  bool check(std::string_view v) override {
    bool ok = pb_.handled[0] == pb_.chains * pb_.hops;
    if (v != "naive" && v != "local") ok = ok && pb_.ended[0] == pb_.chains * (origin_ + 1);
    return all_reduce(std::int64_t{ok ? 0 : 1}) == 0;
  }
  [[nodiscard]] std::string result() const override {
    return fmt::format("hops {}", all_reduce(std::int64_t{pb_.handled[0]}));
  }
  ~pointer_chase_bench() override {
    if (pb_.ended.data() != nullptr) {
      symmetric_free(pb_.ended);
      symmetric_free(pb_.handled);
      symmetric_free(pb_.next);
    }
  }

 private:
  pointer_chase::problem pb_;
  int origin_ = 0;  // where the chains that end here start
};

}  // namespace

app_info pointer_chase_app() {
  app_info app{"pointer-chase",
               "Active Pebbles' PointerChase: chains of small messages relayed around a random "
               "ring of the PEs, each hop sent by the previous one's handler",
               "hop",
               100'000,
               0,
               1'000,
               0,
               {"naive", "conveyor", "selector", "lambda", "local"},
               [] { return std::make_unique<pointer_chase_bench>(); }};
  app.n_means = "hops per chain";
  app.rate = {"hops/s", 1};
  app.options = {{"chains",
                  "chains each PE starts (1: latency-bound, one message per PE in flight; more: "
                  "their hops share buffers)",
                  1, 1}};
  app.local_floor = "the same number of dependent loads through a ring in this PE's memory";
  return app;
}

}  // namespace mailroom::apps
