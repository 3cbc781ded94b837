// SPDX-License-Identifier: MIT
// Fuzz target for the Matrix Market parser (libFuzzer entry point; replay_main.cpp runs the same
// function over the corpus in builds without libFuzzer). Every input must either parse into a
// well-formed matrix that formats and parses back to itself, or fail with a line number and a
// message. Anything else (a crash, a sanitizer report, a broken invariant) aborts.
#include "mailroom/matrix_market.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

namespace mm = mailroom::matrix_market;

namespace {

// The limits keep each input's memory small (a row costs 8 bytes even when it is empty).
constexpr mm::limits fuzz_limits{1 << 16, 1 << 20};

[[noreturn]] void broken(const char* what) {
  std::fprintf(stderr, "matrix_market fuzz: %s\n", what);
  std::abort();
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])))) return false;
  return true;
}

void check_well_formed(const mailroom::sparse_matrix::serial& m) {
  if (m.rows < 0 || m.cols < 0 || m.rows > fuzz_limits.max_dimension ||
      m.cols > fuzz_limits.max_dimension)
    broken("dimensions outside the limits");
  if (m.row_ptr.size() != static_cast<std::size_t>(m.rows) + 1 || m.row_ptr.front() != 0 ||
      m.row_ptr.back() != static_cast<std::int64_t>(m.col_idx.size()))
    broken("row_ptr does not span the entries");
  if (!m.values.empty() && m.values.size() != m.col_idx.size())
    broken("values and columns differ in length");
  for (std::size_t r = 0; r + 1 < m.row_ptr.size(); ++r) {
    if (m.row_ptr[r] > m.row_ptr[r + 1]) broken("row_ptr decreases");
    for (auto k = m.row_ptr[r]; k < m.row_ptr[r + 1]; ++k) {
      const auto c = m.col_idx[static_cast<std::size_t>(k)];
      if (c < 0 || c >= m.cols) broken("column out of range");
      if (k > m.row_ptr[r] && m.col_idx[static_cast<std::size_t>(k) - 1] >= c)
        broken("columns of a row not strictly increasing");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  mm::error err;
  const auto m = mm::parse(text, err, fuzz_limits);
  if (!m) {
    if (err.line < 1 || err.message.empty()) broken("a failure without a line or a message");
    return 0;
  }
  check_well_formed(*m);
  // What format writes, parse reads back unchanged.
  const std::string again = mm::format(*m);
  mm::error err2;
  const auto m2 = mm::parse(again, err2, fuzz_limits);
  if (!m2) broken("format wrote a file that parse rejects");
  if (m2->rows != m->rows || m2->cols != m->cols || m2->row_ptr != m->row_ptr ||
      m2->col_idx != m->col_idx || !same_values(m2->values, m->values))
    broken("parse(format(m)) differs from m");
  return 0;
}
