// SPDX-License-Identifier: MIT
// Matrix Market (coordinate format; pattern, integer and real; general and symmetric) reading
// and writing, so the kernels run on real graphs, Bale's files among them. Parsing never crashes:
// a malformed file gives an error with its line number and what was expected.
#pragma once

#include "mailroom/sparse_matrix.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailroom::matrix_market {

/// A parse failure: the 1-based line and what was expected there.
struct error {
  /// The line, from 1 (one past the last when the text ends too early).
  std::int64_t line = 0;
  /// What was wrong and, when it helps, what was expected.
  std::string message;
};

/// A departure from the format that parse accepts rather than refuses, such as Bale's banner
/// without its symmetry field: the 1-based line and what was assumed.
struct warning {
  /// The line the departure is on.
  std::int64_t line = 0;
  /// What is missing and how it was read, in one line.
  std::string message;
};

/// The largest row or column count, and the largest number of entries, that parse accepts. A
/// file past them is an error naming the limit. The matrix takes memory for every row (8 bytes)
/// and entry (16-24 bytes): a caller that reads untrusted files can lower the limits to bound it.
struct limits {
  /// The most rows, and the most columns, accepted.
  std::int64_t max_dimension = 1'000'000'000;
  /// The most entries the size line may declare.
  std::int64_t max_entries = 1'000'000'000;
};

/// The whole matrix from Matrix Market text (serial, no MPI: also the fuzz target's entry).
/// Symmetric files are expanded (both triangles); pattern files have no values; entries are
/// sorted by row then column; duplicates are an error. On failure returns nullopt and fills err.
/// Accepted: the banner "%%MatrixMarket matrix coordinate pattern|integer|real general|symmetric"
/// (words in any case), then comment lines (first non-blank character %) and blank lines
/// anywhere, the size line "rows cols entries", and one entry "i j [value]" per line with
/// 1-based indices (a symmetric file may give either triangle; giving both is a duplicate).
/// The banner as Bale writes it, without the symmetry ("%%MatrixMarket matrix coordinate
/// real"), is read as general, and said so in `warnings` when the caller passes it.
/// Rejected with a message: array format, complex, hermitian and skew-symmetric fields,
/// sizes beyond `lim`, and anything else not of this form.
std::optional<sparse_matrix::serial> parse(std::string_view text, error& err,
                                           const limits& lim = {},
                                           std::vector<warning>* warnings = nullptr);

/// Matrix Market text for a whole matrix ("general"; "pattern" when it has no values, else "real").
std::string format(const sparse_matrix::serial& m);

/// The whole matrix of `path`, read and parsed by the calling process alone (no runtime needed,
/// not collective). A missing or malformed file is a fatal error naming the file, the line and
/// what was expected; each departure parse accepted is one line on stderr naming the file
/// ("mailroom: warning: FILE:LINE: ...").
sparse_matrix::serial read_serial(const std::string& path);
/// Collective: reads `path` on PE 0 (read_serial: its warnings are PE 0's alone) and gives every
/// PE its cyclic share. A missing or malformed file is a fatal error naming the file, the line
/// and what was expected.
sparse_matrix read(const std::string& path);
/// Collective: gathers the matrix on PE 0, which writes it to `path`.
void write(const std::string& path, const sparse_matrix& m);

}  // namespace mailroom::matrix_market
