// SPDX-License-Identifier: MIT
// Distributed CSR matrices, rows cyclic over the PEs: construction with its checks, and the
// collectives that move a whole matrix between one PE and all (gather, scatter).
#include "mailroom/sparse_matrix.hpp"

#include "rooted.hpp"

#include "mailroom/collectives.hpp"
#include "mailroom/error.hpp"
#include "mailroom/runtime.hpp"

#include <algorithm>
#include <climits>
#include <numeric>
#include <span>
#include <utility>

namespace mailroom {

namespace {

// MPI counts are ints: a whole matrix moved through one PE must have fewer than 2^31 rows and
// nonzeros.
void check_fits_int(std::int64_t n, const char* call, const char* what) {
  MAILROOM_CHECK(n <= INT_MAX,
                 "{}: {} {} do not fit in one MPI message (at most {}): use a "
                 "distributed algorithm for matrices this large",
                 call, n, what, INT_MAX);
}

// Sorts cols[begin, end) ascending, carrying values (if any) along (row: scratch, reused).
void sort_row(std::vector<std::int64_t>& cols, std::vector<double>& values, std::size_t begin,
              std::size_t end, std::vector<std::pair<std::int64_t, double>>& row) {
  if (values.empty()) {
    std::sort(cols.begin() + static_cast<std::ptrdiff_t>(begin),
              cols.begin() + static_cast<std::ptrdiff_t>(end));
    return;
  }
  row.clear();
  for (std::size_t k = begin; k < end; ++k) row.emplace_back(cols[k], values[k]);
  std::sort(row.begin(), row.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = begin; k < end; ++k) {
    cols[k] = row[k - begin].first;
    values[k] = row[k - begin].second;
  }
}

}  // namespace

sparse_matrix::sparse_matrix(std::int64_t rows, std::int64_t cols,
                             std::vector<std::int64_t> row_ptr, std::vector<std::int64_t> col_idx,
                             std::vector<double> values)
    : rows_(rows),
      cols_(cols),
      row_ptr_(std::move(row_ptr)),
      col_idx_(std::move(col_idx)),
      values_(std::move(values)) {
  const int me = this_pe().rank(), pes = num_pes();
  me_ = me;
  pes_ = pes;
  MAILROOM_CHECK(rows >= 0 && cols >= 0, "sparse_matrix: dimensions {} x {} must not be negative",
                 rows, cols);
  const std::int64_t lrows = local_rows(rows, me, pes);
  MAILROOM_CHECK(static_cast<std::int64_t>(row_ptr_.size()) == lrows + 1,
                 "sparse_matrix: row_ptr has {} entries, expected {} (this PE's {} rows of {} on "
                 "PE {} of {}, plus one)",
                 row_ptr_.size(), lrows + 1, lrows, rows, me, pes);
  MAILROOM_CHECK(row_ptr_[0] == 0, "sparse_matrix: row_ptr[0] is {}, expected 0", row_ptr_[0]);
  for (std::int64_t l = 0; l < lrows; ++l) {
    const auto u = static_cast<std::size_t>(l);
    MAILROOM_CHECK(row_ptr_[u] <= row_ptr_[u + 1],
                   "sparse_matrix: row_ptr decreases at local row {} ({} then {})", l, row_ptr_[u],
                   row_ptr_[u + 1]);
  }
  MAILROOM_CHECK(row_ptr_.back() == local_nnz(),
                 "sparse_matrix: row_ptr ends at {} but col_idx has {} entries", row_ptr_.back(),
                 local_nnz());
  MAILROOM_CHECK(values_.empty() || values_.size() == col_idx_.size(),
                 "sparse_matrix: {} values for {} column indices (give none, or one per column "
                 "index)",
                 values_.size(), col_idx_.size());
  std::vector<std::pair<std::int64_t, double>> row;  // (a row being sorted, with its values)
  for (std::int64_t l = 0; l < lrows; ++l) {
    const auto begin = static_cast<std::size_t>(row_ptr_[static_cast<std::size_t>(l)]);
    const auto end = static_cast<std::size_t>(row_ptr_[static_cast<std::size_t>(l) + 1]);
    // One pass: each column in range, and whether they increase strictly (sorted, none twice);
    // only a row that does not is sorted and searched for a column twice.
    bool increasing = true;
    std::int64_t previous = -1;
    for (std::size_t k = begin; k < end; ++k) {
      const std::int64_t c = col_idx_[k];
      MAILROOM_CHECK(static_cast<std::uint64_t>(c) < static_cast<std::uint64_t>(cols),
                     "sparse_matrix: column {} in row {} is out of range [0, {})", c, l * pes + me,
                     cols);
      increasing &= previous < c;
      previous = c;
    }
    if (increasing) continue;
    sort_row(col_idx_, values_, begin, end, row);
    for (std::size_t k = begin + 1; k < end; ++k)
      MAILROOM_CHECK(col_idx_[k - 1] != col_idx_[k],
                     "sparse_matrix: column {} appears twice in row {}", col_idx_[k], l * pes + me);
  }
}

std::int64_t sparse_matrix::global_nnz() const { return all_reduce(local_nnz(), plus<>{}); }

sparse_matrix::serial sparse_matrix::gather(int root) const {
  const int me = this_pe().rank(), pes = num_pes();
  MAILROOM_CHECK(root >= 0 && root < pes, "sparse_matrix::gather: root {} is out of range [0, {})",
                 root, pes);
  MAILROOM_CHECK(all_reduce(rows_, min<>{}) == all_reduce(rows_, max<>{}) &&
                     all_reduce(cols_, min<>{}) == all_reduce(cols_, max<>{}),
                 "sparse_matrix::gather: the PEs hold parts of different matrices (this PE's is "
                 "{} x {})",
                 rows_, cols_);
  const bool any_values = all_reduce(has_values() ? 1 : 0, max<>{}) == 1;
  MAILROOM_CHECK(!any_values || has_values() || local_nnz() == 0,
                 "sparse_matrix::gather: other PEs' parts have values, this PE's {} nonzeros "
                 "have none",
                 local_nnz());
  check_fits_int(rows_, "sparse_matrix::gather", "rows");
  check_fits_int(all_reduce(local_nnz(), plus<>{}), "sparse_matrix::gather", "nonzeros");

  // Row lengths first, then the columns and values, each PE's rows in one block.
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(local_rows()));
  for (std::size_t l = 0; l < lengths.size(); ++l) lengths[l] = row_ptr_[l + 1] - row_ptr_[l];
  std::vector<int> row_counts, row_displs, nnz_displs;
  std::vector<int> nnz_counts = mailroom::gather(static_cast<int>(local_nnz()), root);
  serial out;
  std::vector<std::int64_t> all_lengths, all_cols;
  std::vector<double> all_values;
  if (me == root) {
    row_counts.resize(static_cast<std::size_t>(pes));
    for (int p = 0; p < pes; ++p)
      row_counts[static_cast<std::size_t>(p)] = static_cast<int>(local_rows(rows_, p, pes));
    row_displs.resize(static_cast<std::size_t>(pes));
    std::exclusive_scan(row_counts.begin(), row_counts.end(), row_displs.begin(), 0);
    nnz_displs.resize(static_cast<std::size_t>(pes));
    std::exclusive_scan(nnz_counts.begin(), nnz_counts.end(), nnz_displs.begin(), 0);
    all_lengths.resize(static_cast<std::size_t>(rows_));
    const auto nnz =
        static_cast<std::size_t>(nnz_displs.back()) + static_cast<std::size_t>(nnz_counts.back());
    all_cols.resize(nnz);
    if (any_values) all_values.resize(nnz);
  }
  using matrix_detail::gather_v;
  gather_v(std::span<const std::int64_t>(lengths), std::span<std::int64_t>(all_lengths),
           std::span<const int>(row_counts), std::span<const int>(row_displs), root);
  gather_v(std::span<const std::int64_t>(col_idx_), std::span<std::int64_t>(all_cols),
           std::span<const int>(nnz_counts), std::span<const int>(nnz_displs), root);
  if (any_values)
    gather_v(std::span<const double>(values_), std::span<double>(all_values),
             std::span<const int>(nnz_counts), std::span<const int>(nnz_displs), root);
  if (me != root) return out;

  // Interleave: global row r is row r / P of PE r % P, whose rows arrive in order.
  out.rows = rows_;
  out.cols = cols_;
  out.row_ptr.assign(static_cast<std::size_t>(rows_) + 1, 0);
  out.col_idx.resize(all_cols.size());
  if (any_values) out.values.resize(all_values.size());
  std::vector<std::int64_t> cursor(nnz_displs.begin(), nnz_displs.end());
  std::size_t at = 0;
  for (std::int64_t r = 0; r < rows_; ++r) {
    const auto p = static_cast<std::size_t>(r % pes);
    const auto len = all_lengths[static_cast<std::size_t>(row_displs[p] + r / pes)];
    const auto from = static_cast<std::size_t>(cursor[p]);
    std::copy_n(all_cols.begin() + static_cast<std::ptrdiff_t>(from), len,
                out.col_idx.begin() + static_cast<std::ptrdiff_t>(at));
    if (any_values)
      std::copy_n(all_values.begin() + static_cast<std::ptrdiff_t>(from), len,
                  out.values.begin() + static_cast<std::ptrdiff_t>(at));
    cursor[p] += len;
    at += static_cast<std::size_t>(len);
    out.row_ptr[static_cast<std::size_t>(r) + 1] = static_cast<std::int64_t>(at);
  }
  return out;
}

sparse_matrix sparse_matrix::scatter(const serial& whole, int root) {
  const int me = this_pe().rank(), pes = num_pes();
  MAILROOM_CHECK(root >= 0 && root < pes, "sparse_matrix::scatter: root {} is out of range [0, {})",
                 root, pes);
  // rows, cols, has values, nonzeros: known on root only until broadcast.
  std::int64_t head[4] = {whole.rows, whole.cols, whole.values.empty() ? 0 : 1,
                          static_cast<std::int64_t>(whole.col_idx.size())};
  if (me == root) {
    MAILROOM_CHECK(whole.rows >= 0 && whole.cols >= 0,
                   "sparse_matrix::scatter: dimensions {} x {} must not be negative", whole.rows,
                   whole.cols);
    MAILROOM_CHECK(static_cast<std::int64_t>(whole.row_ptr.size()) == whole.rows + 1,
                   "sparse_matrix::scatter: row_ptr has {} entries for {} rows, expected {}",
                   whole.row_ptr.size(), whole.rows, whole.rows + 1);
    MAILROOM_CHECK(whole.row_ptr.front() == 0 &&
                       whole.row_ptr.back() == static_cast<std::int64_t>(whole.col_idx.size()),
                   "sparse_matrix::scatter: row_ptr runs from {} to {}, expected 0 to {} (the "
                   "number of column indices)",
                   whole.row_ptr.front(), whole.row_ptr.back(), whole.col_idx.size());
    for (std::size_t r = 0; r < static_cast<std::size_t>(whole.rows); ++r)
      MAILROOM_CHECK(whole.row_ptr[r] <= whole.row_ptr[r + 1],
                     "sparse_matrix::scatter: row_ptr decreases at row {}", r);
    MAILROOM_CHECK(whole.values.empty() || whole.values.size() == whole.col_idx.size(),
                   "sparse_matrix::scatter: {} values for {} column indices", whole.values.size(),
                   whole.col_idx.size());
  }
  broadcast(std::span<std::int64_t>(head), root);
  const std::int64_t rows = head[0], cols = head[1];
  const bool values = head[2] != 0;
  check_fits_int(rows, "sparse_matrix::scatter", "rows");
  check_fits_int(head[3], "sparse_matrix::scatter", "nonzeros");

  // On root: every PE's row lengths, columns and values in one block per PE, PE order.
  std::vector<int> row_counts, row_displs, nnz_counts, nnz_displs;
  std::vector<std::int64_t> send_lengths, send_cols;
  std::vector<double> send_values;
  if (me == root) {
    row_counts.resize(static_cast<std::size_t>(pes));
    row_displs.resize(static_cast<std::size_t>(pes));
    nnz_counts.assign(static_cast<std::size_t>(pes), 0);
    nnz_displs.resize(static_cast<std::size_t>(pes));
    for (int p = 0; p < pes; ++p)
      row_counts[static_cast<std::size_t>(p)] = static_cast<int>(local_rows(rows, p, pes));
    std::exclusive_scan(row_counts.begin(), row_counts.end(), row_displs.begin(), 0);
    for (std::int64_t r = 0; r < rows; ++r)
      nnz_counts[static_cast<std::size_t>(r % pes)] +=
          static_cast<int>(whole.row_ptr[static_cast<std::size_t>(r) + 1] -
                           whole.row_ptr[static_cast<std::size_t>(r)]);
    std::exclusive_scan(nnz_counts.begin(), nnz_counts.end(), nnz_displs.begin(), 0);
    send_lengths.resize(static_cast<std::size_t>(rows));
    send_cols.resize(whole.col_idx.size());
    send_values.resize(whole.values.size());
    std::vector<std::int64_t> at(nnz_displs.begin(), nnz_displs.end());
    for (std::int64_t r = 0; r < rows; ++r) {
      const auto p = static_cast<std::size_t>(r % pes);
      const auto begin = whole.row_ptr[static_cast<std::size_t>(r)];
      const auto len = whole.row_ptr[static_cast<std::size_t>(r) + 1] - begin;
      send_lengths[static_cast<std::size_t>(row_displs[p] + r / pes)] = len;
      std::copy_n(whole.col_idx.begin() + begin, len,
                  send_cols.begin() + static_cast<std::ptrdiff_t>(at[p]));
      if (values)
        std::copy_n(whole.values.begin() + begin, len,
                    send_values.begin() + static_cast<std::ptrdiff_t>(at[p]));
      at[p] += len;
    }
  }
  const std::int64_t lrows = local_rows(rows, me, pes);
  // This PE's nonzeros: root's count for it (MPI_Scatter as an all_to_all whose blocks from the
  // other PEs are zero).
  std::vector<int> counts_out(static_cast<std::size_t>(pes), 0);
  if (me == root) counts_out = nnz_counts;
  const int lnnz = all_to_all(std::span<const int>(counts_out))[static_cast<std::size_t>(root)];
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(lrows));
  std::vector<std::int64_t> col_idx(static_cast<std::size_t>(lnnz));
  std::vector<double> vals(values ? static_cast<std::size_t>(lnnz) : 0);
  using matrix_detail::scatter_v;
  scatter_v(std::span<const std::int64_t>(send_lengths), std::span<const int>(row_counts),
            std::span<const int>(row_displs), std::span<std::int64_t>(lengths), root);
  scatter_v(std::span<const std::int64_t>(send_cols), std::span<const int>(nnz_counts),
            std::span<const int>(nnz_displs), std::span<std::int64_t>(col_idx), root);
  if (values)
    scatter_v(std::span<const double>(send_values), std::span<const int>(nnz_counts),
              std::span<const int>(nnz_displs), std::span<double>(vals), root);
  std::vector<std::int64_t> row_ptr(static_cast<std::size_t>(lrows) + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), row_ptr.begin() + 1);
  return sparse_matrix(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(vals));
}

}  // namespace mailroom
