// SPDX-License-Identifier: MIT
// The toposort mini-app for the driver: a permuted unit upper-triangular matrix and its transpose
// as input, the variants, and the exact checker (both permutations are permutations, and the
// matrix they permute is upper triangular with every diagonal entry present).
#include "common/driver.hpp"
#include "toposort/toposort.hpp"

#include <mailroom/generators.hpp>

namespace mailroom::apps {

namespace {
class toposort_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    a_ = permuted_upper_triangular(s.n * num_pes(), s.nnz_per_row, s.seed);
    at_ = transpose(a_);
  }
  void reset() override { res_ = {}; }
  void run(std::string_view v) override {
    if (v == "naive")
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
  bool check(std::string_view) override {
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

 private:
  sparse_matrix a_, at_;
  toposort::result res_;
};
}  // namespace

app_info toposort_app() {
  return {"toposort",
          "rows and columns that make a permuted unit upper-triangular matrix triangular again "
          "(Bale's toposort)",
          "nonzero",
          100'000,
          0,
          500,
          0,
          {"naive", "bsp", "conveyor", "selector", "lambda"},
          [] { return std::make_unique<toposort_bench>(); },
          10,
          4,
          false,
          "rows"};
}

}  // namespace mailroom::apps
