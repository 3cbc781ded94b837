// SPDX-License-Identifier: MIT
// The transpose-matrix mini-app for the driver: input, variants, and the exact checker.
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "common/own_rows.hpp"
#include "transpose_matrix/transpose_matrix.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

#include <algorithm>

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
    if (std::ranges::find(s.variants, "local") != s.variants.end()) {
      own_ = own_rows(a_);
      own_want_ = reference::transpose(own_);
    }
  }
  void reset() override {
    t_ = sparse_matrix();
    own_t_ = {};
  }
  void run(std::string_view v) override {
    ran_ = v;
    if (v == "local")
      own_t_ = transpose_matrix::local(own_);
    else
      t_ = transpose_by(v, a_);
  }
  bool check(std::string_view v) override {
    // Against the library's serial reference on every PE, and the variant's own transpose of its
    // result must give A back (local: this PE's rows alone, against the reference transpose).
    const bool same = v == "local" ? own_t_ == own_want_ && transpose_matrix::local(own_t_) == own_
                                   : same_here(t_, want_) && same_here(transpose_by(v, t_), a_);
    return all_reduce(same ? 1 : 0, min<>{}) == 1;
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return a_.local_nnz(); }
  [[nodiscard]] std::string result() const override {
    return ran_ == "local" ? matrix_result(own_t_) : matrix_result(t_);
  }

 private:
  sparse_matrix a_, want_, t_;
  sparse_matrix::serial own_, own_want_, own_t_;  // the local variant's input, reference, output
  std::string ran_;                               // the variant whose output t_ or own_t_ holds
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
               {"naive", "bsp", "conveyor", "selector", "lambda", "local"},
               [] { return std::make_unique<transpose_matrix_bench>(); }};
  app.default_nnz = 10;
  app.quick_nnz = 5;
  app.takes_matrix = true;
  app.n_means = "rows";
  app.local_floor =
      "the same loops on this PE's rows alone (a matrix of their own, columns renumbered), every "
      "access local";
  return app;
}

}  // namespace mailroom::apps
