// SPDX-License-Identifier: MIT
// The toposort mini-app for the driver: a permuted unit upper-triangular matrix and its transpose
// as input, the variants, and the exact checker (both permutations are permutations, and the
// matrix they permute is upper triangular with every diagonal entry present).
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "toposort/toposort.hpp"

#include <mailroom/generators.hpp>

#include <algorithm>
#include <utility>

namespace mailroom::apps {

namespace {
// True when p holds each of 0..n-1 once.
bool is_permutation_of(const std::vector<std::int64_t>& p, std::int64_t n) {
  std::vector<char> seen(static_cast<std::size_t>(n), 0);
  for (const std::int64_t v : p)
    if (v < 0 || v >= n || std::exchange(seen[static_cast<std::size_t>(v)], 1) != 0) return false;
  return std::ssize(p) == n;
}

// The order's checksum: every row's and every column's position (rows at even, columns at odd
// places).
std::uint64_t order_hash(const std::vector<std::int64_t>& perm, auto global, std::int64_t odd) {
  std::uint64_t h = 0;
  for (std::size_t i = 0; i < perm.size(); ++i)
    h += element_hash(2 * global(static_cast<std::int64_t>(i)) + odd, perm[i]);
  return h;
}

class toposort_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    a_ = permuted_upper_triangular(s.n * num_pes(), s.nnz_per_row, s.seed);
    at_ = transpose(a_);
    if (std::ranges::find(s.variants, "local") != s.variants.end()) {
      whole_ = a_.gather(0);  // the floor's input, on PE 0 only
      whole_t_ = at_.gather(0);
    }
  }
  void reset() override { res_ = {}; }
  void run(std::string_view v) override {
    ran_ = v;
    if (v == "local") {
      if (this_pe().rank() == 0) res_ = toposort::local(whole_, whole_t_);
    } else if (v == "naive")
      res_ = toposort::naive(a_, at_);
    else if (v == "bsp")
      res_ = toposort::bsp(a_, at_);
    else if (v == "conveyor")
      res_ = toposort::conveyor(a_, at_);
    else if (v == "selector")
      res_ = toposort::selector(a_, at_);
    else if (v == "lambda")
      res_ = toposort::lambda(a_, at_);
  }
  bool check(std::string_view v) override {
    if (v == "local")
      return all_reduce(std::int64_t{this_pe().rank() == 0 && !whole_sorted()}) == 0;
    const bool sizes_ok = std::ssize(res_.row_perm) == a_.local_rows() &&
                          std::ssize(res_.col_perm) == at_.local_rows();
    if (all_reduce(sizes_ok ? 1 : 0, min<>{}) == 0 ||
        !is_distributed_permutation(res_.row_perm, a_.rows()) ||
        !is_distributed_permutation(res_.col_perm, a_.cols()))
      return false;
    // Upper triangular with the diagonal present: every row's first (smallest) column is its own.
    const sparse_matrix b = permute(a_, res_.row_perm, res_.col_perm);
    std::int64_t wrong = 0;
    for (std::int64_t l = 0; l < b.local_rows(); ++l) {
      const auto cols = b.row(l);
      wrong += cols.empty() || cols.front() != b.global_row(l) ||
               (b.has_values() && b.row_values(l).front() != 1.0);
    }
    return all_reduce(wrong) == 0;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return a_.local_nnz(); }
  [[nodiscard]] std::string result() const override {
    // local's permutations are whole, on PE 0: row i's position at i.
    const bool whole = ran_ == "local";
    const auto row = [&](std::int64_t l) { return whole ? l : a_.global_row(l); };
    const auto col = [&](std::int64_t l) { return whole ? l : at_.global_row(l); };
    return "checksum " +
           checksum_text(order_hash(res_.row_perm, row, 0) + order_hash(res_.col_perm, col, 1));
  }
  [[nodiscard]] int time_divisor(std::string_view v) const override {
    return v == "local" ? num_pes() : 1;
  }

 private:
  // The local variant's check, on PE 0: both are permutations, and in every row of the permuted
  // matrix the diagonal entry (a one) is the first.
  [[nodiscard]] bool whole_sorted() const {
    const std::int64_t n = whole_.rows;
    if (!is_permutation_of(res_.row_perm, n) || !is_permutation_of(res_.col_perm, whole_.cols))
      return false;
    for (std::int64_t i = 0; i < n; ++i) {
      std::int64_t first = whole_.cols, first_at = -1;
      for (std::int64_t k = whole_.row_ptr[i]; k < whole_.row_ptr[i + 1]; ++k)
        if (res_.col_perm[whole_.col_idx[k]] < first)
          first = res_.col_perm[whole_.col_idx[k]], first_at = k;
      if (first != res_.row_perm[i] || (!whole_.values.empty() && whole_.values[first_at] != 1.0))
        return false;
    }
    return true;
  }

  sparse_matrix a_, at_;
  sparse_matrix::serial whole_, whole_t_;  // local's input, on PE 0
  toposort::result res_;
  std::string ran_;  // the variant whose output res_ holds
};
}  // namespace

app_info toposort_app() {
  app_info app{
      "toposort",
      "rows and columns that make a permuted unit upper-triangular matrix triangular again "
      "(Bale's toposort)",
      "nonzero",
      100'000,
      0,
      500,
      0,
      {"naive", "bsp", "conveyor", "selector", "lambda", "local"},
      [] { return std::make_unique<toposort_bench>(); },
      10,
      4,
      false,
      "rows"};
  app.local_floor =
      "the serial algorithm over the whole matrix on PE 0 (naive's loop, every access local), "
      "its time divided by P: no PE's share stands alone";
  return app;
}

}  // namespace mailroom::apps
