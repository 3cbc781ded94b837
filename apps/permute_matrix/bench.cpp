// SPDX-License-Identifier: MIT
// The permute-matrix mini-app for the driver: input, variants, and the exact checker.
#include "common/checksum.hpp"
#include "common/driver.hpp"
#include "common/own_rows.hpp"
#include "permute_matrix/permute_matrix.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/matrix_market.hpp>

#include <algorithm>
#include <numeric>

namespace mailroom::apps {

namespace permute_matrix {
local_problem local_problem_of(const problem& pb, std::uint64_t seed) {
  local_problem lp{own_rows(pb.a), {}, {}};
  // Rows: in the order of their new global rows. Columns: a random order (Fisher-Yates), as the
  // whole column permutation is spread over the PEs.
  std::vector<std::int64_t> by_new_row(static_cast<std::size_t>(lp.a.rows));
  std::iota(by_new_row.begin(), by_new_row.end(), 0);
  std::ranges::sort(by_new_row, {}, [&](std::int64_t l) { return pb.row_perm[l]; });
  lp.row_perm.resize(by_new_row.size());
  for (std::size_t i = 0; i < by_new_row.size(); ++i)
    lp.row_perm[by_new_row[i]] = static_cast<std::int64_t>(i);
  lp.col_perm.resize(static_cast<std::size_t>(lp.a.cols));
  std::iota(lp.col_perm.begin(), lp.col_perm.end(), 0);
  input_stream in(seed + 2, this_pe().rank());
  for (std::int64_t i = lp.a.cols - 1; i > 0; --i)
    std::swap(lp.col_perm[i], lp.col_perm[in.below(i + 1)]);
  return lp;
}
}  // namespace permute_matrix

namespace {
class permute_matrix_bench final : public kernel_bench {
 public:
  void prepare(const sizes& s) override {
    pb_.a = s.matrix.empty() ? erdos_renyi(s.n * num_pes(), s.nnz_per_row, s.seed)
                             : matrix_market::read(s.matrix);
    pb_.row_perm = random_permutation(pb_.a.rows(), s.seed + 1);
    pb_.col_perm = random_permutation(pb_.a.cols(), s.seed + 2);
    want_ = permute(pb_.a, pb_.row_perm, pb_.col_perm);
    if (std::ranges::find(s.variants, "local") != s.variants.end()) {
      local_pb_ = permute_matrix::local_problem_of(pb_, s.seed);
      local_want_ = reference::permute(local_pb_.a, local_pb_.row_perm, local_pb_.col_perm);
    }
  }
  void reset() override {
    b_ = sparse_matrix();
    local_b_ = {};
  }
  void run(std::string_view v) override {
    ran_ = v;
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
    else if (v == "local")
      local_b_ = permute_matrix::local(local_pb_);
  }
  bool check(std::string_view v) override {
    // Against the library's serial reference, row by row on every PE: nothing lost, moved or
    // changed (local: this PE's rows, against the reference permutation of them alone).
    if (v == "local") return all_reduce(local_b_ == local_want_ ? 1 : 0, min<>{}) == 1;
    const bool same = b_.rows() == want_.rows() && b_.cols() == want_.cols() &&
                      b_.row_ptr() == want_.row_ptr() && b_.col_idx() == want_.col_idx() &&
                      b_.values() == want_.values();
    return all_reduce(same ? 1 : 0, min<>{}) == 1 && b_.global_nnz() == pb_.a.global_nnz();
  }
  [[nodiscard]] std::int64_t ops_per_pe() const override { return pb_.a.local_nnz(); }
  [[nodiscard]] std::string result() const override {
    return ran_ == "local" ? matrix_result(local_b_) : matrix_result(b_);
  }

 private:
  permute_matrix::problem pb_;
  sparse_matrix want_, b_;
  permute_matrix::local_problem local_pb_;
  sparse_matrix::serial local_want_, local_b_;
  std::string ran_;  // the variant whose output b_ or local_b_ holds
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
               {"naive", "bsp", "conveyor", "selector", "lambda", "local"},
               [] { return std::make_unique<permute_matrix_bench>(); }};
  app.default_nnz = 10;
  app.quick_nnz = 5;
  app.takes_matrix = true;
  app.n_means = "rows";
  app.local_floor =
      "the same loops on this PE's rows alone (a matrix of their own, columns renumbered, with a "
      "permutation of each), every access local";
  return app;
}

}  // namespace mailroom::apps
