// SPDX-License-Identifier: MIT
// Distributed sparse matrices: CSR, rows distributed cyclically over the PEs (global row r on
// PE r % P as local row r / P), global column indices, optional values. The data structure of
// the Bale kernels, reusable by any mailroom program.
#pragma once

#include "mailroom/distribution.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace mailroom {

/// This PE's rows of an R x C sparse matrix distributed cyclically by rows. Columns are global
/// indices in [0, C), sorted and distinct within each row. Values are optional (a pattern
/// matrix has none). A plain value type: copying it copies this PE's part only.
class sparse_matrix {
 public:
  sparse_matrix() = default;
  /// This PE's part: row_ptr has local_rows(rows)+1 entries (row_ptr[0] = 0), col_idx has
  /// row_ptr.back() entries, values is empty or as long as cols. Checked (fatal error naming
  /// what is wrong); columns are sorted within each row here if they are not. Local, not
  /// collective.
  sparse_matrix(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> row_ptr,
                std::vector<std::int64_t> col_idx, std::vector<double> values = {});

  ///@{
  /// Global dimensions.
  [[nodiscard]] std::int64_t rows() const noexcept { return rows_; }
  [[nodiscard]] std::int64_t cols() const noexcept { return cols_; }
  ///@}
  /// Rows of a rows-row matrix that live on PE `pe` of `pes`: global rows pe, pe+P, ...
  [[nodiscard]] static std::int64_t local_rows(std::int64_t rows, int pe, int pes) noexcept {
    return rows > pe ? (rows - pe + pes - 1) / pes : 0;
  }
  /// Rows on this PE.
  [[nodiscard]] std::int64_t local_rows() const noexcept {
    return static_cast<std::int64_t>(row_ptr_.size()) - 1;
  }
  /// Nonzeros on this PE.
  [[nodiscard]] std::int64_t local_nnz() const noexcept {
    return static_cast<std::int64_t>(col_idx_.size());
  }
  /// Nonzeros on every PE together (collective).
  [[nodiscard]] std::int64_t global_nnz() const;
  ///@{
  /// The global index of local row l on this PE, and the owner and local index of a global row.
  [[nodiscard]] std::int64_t global_row(std::int64_t local) const noexcept {
    return local * pes_ + me_;
  }
  [[nodiscard]] static int owner(std::int64_t global_row, int pes) noexcept {
    return static_cast<int>(global_row % pes);
  }
  [[nodiscard]] static std::int64_t local_index(std::int64_t global_row, int pes) noexcept {
    return global_row / pes;
  }
  ///@}
  /// The rows' distribution (cyclic over the job's PEs): sends by global row
  /// (`sel.send<I>(a.row_distribution(), r, v)`), gather and distributed arrays of one value per
  /// row.
  [[nodiscard]] cyclic row_distribution() const { return cyclic(rows_); }

  ///@{
  /// Columns (and values, if any) of local row l.
  [[nodiscard]] std::span<const std::int64_t> row(std::int64_t local) const noexcept {
    return {col_idx_.data() + row_ptr_[static_cast<std::size_t>(local)],
            col_idx_.data() + row_ptr_[static_cast<std::size_t>(local) + 1]};
  }
  [[nodiscard]] std::span<const double> row_values(std::int64_t local) const noexcept {
    if (values_.empty()) return {};
    return {values_.data() + row_ptr_[static_cast<std::size_t>(local)],
            values_.data() + row_ptr_[static_cast<std::size_t>(local) + 1]};
  }
  ///@}
  /// False for a pattern matrix.
  [[nodiscard]] bool has_values() const noexcept { return !values_.empty(); }
  ///@{
  /// This PE's part in CSR form, as the constructor describes it: local row l's columns (global)
  /// and values are at [row_ptr[l], row_ptr[l+1]); values is empty for a pattern matrix.
  [[nodiscard]] const std::vector<std::int64_t>& row_ptr() const noexcept { return row_ptr_; }
  [[nodiscard]] const std::vector<std::int64_t>& col_idx() const noexcept { return col_idx_; }
  [[nodiscard]] const std::vector<double>& values() const noexcept { return values_; }
  ///@}

  /// The whole matrix in one place, rows in global order (for checks at small sizes).
  struct serial {
    ///@{
    /// Global dimensions, and the CSR arrays over all rows (row_ptr has rows + 1 entries;
    /// values is empty for a pattern matrix).
    std::int64_t rows = 0, cols = 0;
    std::vector<std::int64_t> row_ptr, col_idx;
    std::vector<double> values;
    ///@}
    /// Equal dimensions, arrays and values (a pattern matrix never equals one with values).
    friend bool operator==(const serial&, const serial&) = default;
  };
  /// Collective: every PE's rows gathered on PE `root` (other PEs get an empty result).
  [[nodiscard]] serial gather(int root = 0) const;
  /// Collective: the inverse of gather; every PE keeps its cyclic share of `whole`, which only
  /// `root` needs to hold.
  static sparse_matrix scatter(const serial& whole, int root = 0);

 private:
  std::int64_t rows_ = 0, cols_ = 0;
  std::int64_t me_ = 0, pes_ = 1;  ///< this PE and the PEs, when the matrix was made
  std::vector<std::int64_t> row_ptr_{0};
  std::vector<std::int64_t> col_idx_;
  std::vector<double> values_;
};

}  // namespace mailroom
