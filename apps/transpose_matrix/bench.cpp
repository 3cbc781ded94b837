// SPDX-License-Identifier: MIT
// The transpose-matrix mini-app for the driver: input, variants, and the exact checker.
#include "common/driver.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

namespace mailroom::apps {

namespace {
sparse_matrix transpose_by(std::string_view v, const sparse_matrix& a) {
  if (v == "naive") return transpose_matrix::naive(a);
  if (v == "bsp") return transpose_matrix::bsp(a);
  if (v == "conveyor") return transpose_matrix::conveyor(a);
  if (v == "selector") return transpose_matrix::selector(a);
  return transpose_matrix::lambda(a);
}

bool same_here(const sparse_matrix& x, const sparse_matrix& y) {
  return x.rows() == y.rows() && x.cols() == y.cols() && x.row_ptr() == y.row_ptr() &&
         x.col_idx() == y.col_idx() && x.values() == y.values();
}

class transpose_matrix_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    a_ = s.matrix.empty() ? erdos_renyi(s.n * num_pes(), s.nnz_per_row, s.seed)
                          : matrix_market::read(s.matrix);
    want_ = transpose(a_);
  }
  void reset() override { t_ = sparse_matrix(); }
  void run(std::string_view v) override { t_ = transpose_by(v, a_); }
  bool check(std::string_view v) override {
    // Against the library's serial reference on every PE, and the variant's own transpose of its
    // result must give A back.
    const bool same = same_here(t_, want_) && same_here(transpose_by(v, t_), a_);
    return all_reduce(same ? 1 : 0, min<>{}) == 1;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return a_.local_nnz(); }

 private:
  sparse_matrix a_, want_, t_;
};
}  // namespace

app_info transpose_matrix_app() {
  app_info app{"transpose-matrix",
               "the transpose of a sparse matrix (Bale's transpose_matrix)",
               "nonzero",
               100'000,
               0,
               1'000,
               0,
               {"naive", "bsp", "conveyor", "selector", "lambda"},
               [] { return std::make_unique<transpose_matrix_bench>(); }};
  app.default_nnz = 10;
  app.quick_nnz = 5;
  app.takes_matrix = true;
  app.n_means = "rows";
  return app;
}

}  // namespace mailroom::apps
