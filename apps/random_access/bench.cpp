// SPDX-License-Identifier: MIT
// The RandomAccess mini-app for the driver: HPCC's sizes and stream, and its verification (the
// stream applied again must restore every word to its index), exact here: no word may be wrong.
#include "common/driver.hpp"
#include "random_access/random_access.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace mailroom::apps {

namespace random_access {

std::uint64_t starts(std::int64_t n) noexcept {
  while (n < 0) n += k_period;
  while (n > k_period) n -= k_period;
  if (n == 0) return 1;
  // The stream's n-th value is x^n modulo the polynomial, over GF(2). m2[j] = x^(2j), the value
  // at 2j (two steps per entry).
  std::uint64_t m2[64];
  std::uint64_t t = 1;
  for (auto& m : m2) {
    m = t;
    t = next(next(t));
  }
  // Square-and-multiply from the top bit of n: squaring ran (a polynomial of degree < 64) is
  // the xor of m2[j] over its set bits j; a set bit of n then multiplies by x (one step).
  int i = 62;
  while (i >= 0 && ((n >> i) & 1) == 0) --i;
  std::uint64_t ran = 2;  // x: n's top bit
  while (i > 0) {
    std::uint64_t sq = 0;
    for (int j = 0; j < 64; ++j)
      if ((ran >> j) & 1) sq ^= m2[j];
    ran = sq;
    --i;
    if ((n >> i) & 1) ran = next(ran);
  }
  return ran;
}

}  // namespace random_access

namespace {

class random_access_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    const int P = num_pes(), me = this_pe().rank();
    if (!std::has_single_bit(static_cast<std::uint64_t>(P)))
      usage_error(
          fmt::format("random-access: HPCC's table is a power of two words: run it on a "
                      "power-of-two number of PEs, not {}",
                      P));
    if (s.table_per_pe < 1 || !std::has_single_bit(static_cast<std::uint64_t>(s.table_per_pe)))
      usage_error(
          fmt::format("random-access: --table {} is not a power of two (HPCC's 2^k "
                      "words per PE)",
                      s.table_per_pe));
    pb_.log_local = std::countr_zero(static_cast<std::uint64_t>(s.table_per_pe));
    pb_.log_pes = std::countr_zero(static_cast<std::uint64_t>(P));
    pb_.updates = s.n;
    pb_.first = s.n * me;
    pb_.lookahead = s.options.at("lookahead");
    if (pb_.lookahead < 0) usage_error("random-access: --lookahead must be 0 (none) or more");
    table_ = symmetric_array<std::uint64_t>(static_cast<std::size_t>(s.table_per_pe));
    // The verification's second pass, gathered once: every update's ran at its owner (one
    // all-to-all), xored per word; and this PE's own, for the local floor.
    std::vector<std::int64_t> rans(static_cast<std::size_t>(s.n));
    std::uint64_t ran = random_access::starts(pb_.first);
    for (auto& r : rans) r = static_cast<std::int64_t>(ran = random_access::next(ran));
    const std::uint64_t mask = pb_.mask();
    again_.assign(static_cast<std::size_t>(s.table_per_pe), 0);
    own_.assign(again_.size(), 0);
    for (const auto r : rans)
      own_[static_cast<std::uint64_t>(r) & mask] ^= static_cast<std::uint64_t>(r);
    const auto owner = [this](std::int64_t r) { return pb_.owner(static_cast<std::uint64_t>(r)); };
    for (const auto r : to_owners(rans, owner))
      again_[static_cast<std::uint64_t>(r) & mask] ^= static_cast<std::uint64_t>(r);
    words_ = static_cast<std::int64_t>(P) * s.table_per_pe;
  }
  void reset() override {
    const std::uint64_t base = static_cast<std::uint64_t>(this_pe().rank()) << pb_.log_local;
    for (std::size_t l = 0; l < table_.size(); ++l) table_[l] = base | l;
  }
  void run(std::string_view v) override {
    if (v == "naive")
      random_access::naive(pb_, table_);
    else if (v == "conveyor")
      random_access::conveyor(pb_, table_);
    else if (v == "selector")
      random_access::selector(pb_, table_);
    else if (v == "lambda")
      random_access::lambda(pb_, table_);
    else if (v == "reduce")
      random_access::reduce(pb_, table_);
    else if (v == "counted")
      random_access::counted(pb_, table_);
    else if (v == "local")
      random_access::local(pb_, table_);
  }
  // HPCC's verification: the stream applied again (xor undoes xor) must give every word its
  // index back. HPCC passes a run with up to 1% of the words wrong; here none may be.
  bool check(std::string_view v) override {
    const auto& again = v == "local" ? own_ : again_;
    const std::uint64_t base = static_cast<std::uint64_t>(this_pe().rank()) << pb_.log_local;
    std::int64_t wrong = 0;
    for (std::size_t l = 0; l < again.size(); ++l) wrong += (table_[l] ^ again[l]) != (base | l);
    wrong_ = all_reduce(wrong);
    return wrong_ == 0;
  }
  [[nodiscard]] std::string result() const override {
    return fmt::format("verified: {} of {} words wrong", wrong_, words_);
  }
  ~random_access_bench() override {
    if (table_.data() != nullptr) symmetric_free(table_);
  }

 private:
  random_access::problem pb_;
  symmetric_array<std::uint64_t> table_;
  std::vector<std::uint64_t> again_, own_;
  std::int64_t words_ = 0, wrong_ = 0;
};

}  // namespace

app_info random_access_app() {
  app_info app{"random-access",
               "HPC Challenge RandomAccess: 4 x table-size xor updates of a distributed table of "
               "2^k words per PE, HPCC's stream and verification (P a power of two)",
               "update",
               4 << 20,
               1 << 20,
               4 << 12,
               1 << 12,
               {"naive", "conveyor", "selector", "lambda", "reduce", "counted", "local"},
               [] { return std::make_unique<random_access_bench>(); }};
  app.n_means = "updates (default 4 x the table, HPCC's rule)";
  app.n_per_table = 4;
  app.rate = {"GUP/s", 1e-9};
  app.seeded = false;  // (HPCC's stream, from starts(4 x table x rank): no seed)
  app.options = {{"lookahead",
                  "HPCC's look-ahead limit L: at most L updates (HPCC: 1024) held before they are "
                  "applied, in rounds each completed everywhere; 0: no limit",
                  0, 0}};
  app.local_floor = "this PE's stream applied to its own table: no communication";
  return app;
}

}  // namespace mailroom::apps
