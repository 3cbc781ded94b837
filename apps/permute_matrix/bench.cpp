// SPDX-License-Identifier: MIT
// The permute-matrix mini-app for the driver: input, variants, and the exact checker.
#include "common/driver.hpp"
#include "permute_matrix/permute_matrix.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

namespace mailroom::apps {

namespace {
class permute_matrix_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    pb_.a = s.matrix.empty() ? erdos_renyi(s.n * num_pes(), s.nnz_per_row, s.seed)
                             : matrix_market::read(s.matrix);
    pb_.row_perm = random_permutation(pb_.a.rows(), s.seed + 1);
    pb_.col_perm = random_permutation(pb_.a.cols(), s.seed + 2);
    want_ = permute(pb_.a, pb_.row_perm, pb_.col_perm);
  }
  void reset() override { b_ = sparse_matrix(); }
  void run(std::string_view v) override {
    if (v == "naive")
      b_ = permute_matrix::naive(pb_);
    else if (v == "bsp")
      b_ = permute_matrix::bsp(pb_);
    else if (v == "conveyor")
      b_ = permute_matrix::conveyor(pb_);
    else if (v == "selector")
      b_ = permute_matrix::selector(pb_);
    else if (v == "lambda")
      b_ = permute_matrix::lambda(pb_);
  }
  bool check(std::string_view) override {
    // Against the library's serial reference, row by row on every PE: nothing lost, moved or
    // changed.
    const bool same = b_.rows() == want_.rows() && b_.cols() == want_.cols() &&
                      b_.row_ptr() == want_.row_ptr() && b_.col_idx() == want_.col_idx() &&
                      b_.values() == want_.values();
    return all_reduce(same ? 1 : 0, min<>{}) == 1 && b_.global_nnz() == pb_.a.global_nnz();
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return pb_.a.local_nnz(); }

 private:
  permute_matrix::problem pb_;
  sparse_matrix want_, b_;
};
}  // namespace

app_info permute_matrix_app() {
  app_info app{"permute-matrix",
               "random row and column permutations of a sparse matrix (Bale's permute_matrix)",
               "nonzero",
               100'000,
               0,
               1'000,
               0,
               {"naive", "bsp", "conveyor", "selector", "lambda"},
               [] { return std::make_unique<permute_matrix_bench>(); }};
  app.default_nnz = 10;
  app.quick_nnz = 5;
  app.takes_matrix = true;
  app.n_means = "rows";
  return app;
}

}  // namespace mailroom::apps
