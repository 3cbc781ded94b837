// SPDX-License-Identifier: MIT
// Matrix Market coordinate files: a parser that reports the first malformed line instead of
// crashing, a writer, and the collective read/write through PE 0.
#include "mailroom/matrix_market.hpp"

#include "mailroom/error.hpp"
#include "mailroom/runtime.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <new>
#include <numeric>
#include <vector>

namespace mailroom::matrix_market {

namespace {

constexpr std::string_view banner_word = "%%matrixmarket";
constexpr std::string_view expected_banner =
    "'%%MatrixMarket matrix coordinate <pattern|integer|real> <general|symmetric>'";

// Text, one line at a time, counting lines from 1. A final line without '\n' counts; the empty
// piece after a final '\n' does not.
class line_reader {
 public:
  explicit line_reader(std::string_view text) : text_(text) {}
  bool next(std::string_view& line) {
    if (at_ >= text_.size()) return false;
    const auto nl = text_.find('\n', at_);
    const auto end = nl == std::string_view::npos ? text_.size() : nl;
    line = text_.substr(at_, end - at_);
    at_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    ++number_;
    return true;
  }
  /// The number of the line last returned (0 before the first).
  [[nodiscard]] std::int64_t number() const noexcept { return number_; }

 private:
  std::string_view text_;
  std::size_t at_ = 0;
  std::int64_t number_ = 0;
};

bool is_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

// Whitespace-separated words of a line.
class tokens {
 public:
  explicit tokens(std::string_view line) : line_(line) {}
  bool next(std::string_view& word) {
    while (at_ < line_.size() && is_space(line_[at_])) ++at_;
    if (at_ >= line_.size()) return false;
    const auto begin = at_;
    while (at_ < line_.size() && !is_space(line_[at_])) ++at_;
    word = line_.substr(begin, at_ - begin);
    return true;
  }

 private:
  std::string_view line_;
  std::size_t at_ = 0;
};

bool blank_or_comment(std::string_view line) {
  for (char c : line) {
    if (is_space(c)) continue;
    return c == '%';
  }
  return true;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A word as printed in a message: quoted, and cut short if long or binary.
std::string shown(std::string_view word) {
  std::string out = "'";
  for (std::size_t k = 0; k < word.size() && k < 40; ++k) {
    const auto c = static_cast<unsigned char>(word[k]);
    out += std::isprint(c) ? static_cast<char>(c) : '?';
  }
  if (word.size() > 40) out += "...";
  return out + "'";
}

enum class parsed { ok, not_a_number, out_of_range };

parsed parse_int(std::string_view word, std::int64_t& out) {
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  if (ec == std::errc::result_out_of_range) return parsed::out_of_range;
  if (ec != std::errc() || end != word.data() + word.size()) return parsed::not_a_number;
  return parsed::ok;
}

parsed parse_real(std::string_view word, double& out) {
  if (word.size() > 1 && word[0] == '+' && word[1] != '-' && word[1] != '+')
    word.remove_prefix(1);  // C's strtod accepts a leading '+', and files have them
  const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), out);
  if (ec == std::errc::result_out_of_range) return parsed::out_of_range;
  if (ec != std::errc() || end != word.data() + word.size()) return parsed::not_a_number;
  return parsed::ok;
}

struct failure {
  std::int64_t line;
  std::string message;
};

// One size on the size line: a non-negative integer within `limit`.
std::optional<failure> size_value(std::string_view word, const char* what, std::int64_t limit,
                                  std::int64_t line, std::int64_t& out) {
  switch (parse_int(word, out)) {
    case parsed::not_a_number:
      return failure{line, fmt::format("the number of {} {} is not an integer", what, shown(word))};
    case parsed::out_of_range:
      return failure{line, fmt::format("the number of {} {} is too large (at most {})", what,
                                       shown(word), limit)};
    case parsed::ok:
      break;
  }
  if (out < 0) return failure{line, fmt::format("the number of {} {} is negative", what, out)};
  if (out > limit)
    return failure{line,
                   fmt::format("the number of {} {} is too large (at most {})", what, out, limit)};
  return std::nullopt;
}

// A 1-based index in [1, limit], returned 0-based.
std::optional<failure> index_value(std::string_view word, const char* what, std::int64_t limit,
                                   std::int64_t line, std::int64_t& out) {
  const auto r = parse_int(word, out);
  if (r == parsed::not_a_number)
    return failure{line, fmt::format("the {} index {} is not an integer", what, shown(word))};
  if (r == parsed::out_of_range || out < 1 || out > limit)
    return failure{line,
                   fmt::format("the {} index {} is out of range 1..{}", what, shown(word), limit)};
  --out;
  return std::nullopt;
}

// a * b for a, b >= 0, or the largest int64 when the product does not fit.
std::int64_t saturating_product(std::int64_t a, std::int64_t b) noexcept {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  return a != 0 && b > most / a ? most : a * b;
}

struct entry {
  std::int64_t row, col;
  double value;
  std::int64_t line;
};

enum class field { pattern, integer, real };

std::optional<sparse_matrix::serial> parse_or_fail(std::string_view text, const limits& lim,
                                                   failure& fail, std::vector<warning>* warnings) {
  line_reader lines(text);
  std::string_view line, word;

  // The banner.
  if (!lines.next(line)) {
    fail = {1, fmt::format("the file is empty: expected the banner {}", expected_banner)};
    return std::nullopt;
  }
  tokens banner(line);
  if (!banner.next(word) || lower(word) != banner_word) {
    fail = {1, fmt::format("expected the banner {}", expected_banner)};
    return std::nullopt;
  }
  std::string words[4];
  const char* names[4] = {"object", "format", "field", "symmetry"};
  for (int w = 0; w < 4; ++w) {
    if (!banner.next(word)) {
      if (w == 3) break;  // Bale's banner: no symmetry (read as general below)
      fail = {1,
              fmt::format("the banner ends before its {}: expected {}", names[w], expected_banner)};
      return std::nullopt;
    }
    words[w] = lower(word);
  }
  if (words[0] != "matrix") {
    fail = {1, fmt::format("unsupported object '{}': only 'matrix' is supported", words[0])};
    return std::nullopt;
  }
  if (words[1] != "coordinate") {
    fail = {1, words[1] == "array"
                   ? std::string("the array (dense) format is not supported: only 'coordinate'")
                   : fmt::format("unknown format '{}': expected 'coordinate'", words[1])};
    return std::nullopt;
  }
  field kind = field::pattern;
  if (words[2] == "pattern") {
    kind = field::pattern;
  } else if (words[2] == "integer") {
    kind = field::integer;
  } else if (words[2] == "real") {
    kind = field::real;
  } else {
    fail = {1,
            words[2] == "complex"
                ? std::string("the complex field is not supported: expected pattern, integer "
                              "or real")
                : fmt::format("unknown field '{}': expected pattern, integer or real", words[2])};
    return std::nullopt;
  }
  bool symmetric = false;
  if (words[3].empty()) {
    // Bale's write_matrix_mm writes every entry of its (general) matrices under this banner.
    if (warnings != nullptr)
      warnings->push_back({1,
                           "the banner has no symmetry field (as Bale writes it): read as "
                           "general"});
  } else if (words[3] == "symmetric") {
    symmetric = true;
  } else if (words[3] != "general") {
    fail = {1, words[3] == "skew-symmetric" || words[3] == "hermitian"
                   ? fmt::format("{} matrices are not supported: expected general or symmetric",
                                 words[3])
                   : fmt::format("unknown symmetry '{}': expected general or symmetric", words[3])};
    return std::nullopt;
  }
  if (banner.next(word)) {
    fail = {1, fmt::format("unexpected {} after the banner", shown(word))};
    return std::nullopt;
  }

  // The size line, after any comments and blank lines.
  bool found = false;
  while (lines.next(line))
    if (!blank_or_comment(line)) {
      found = true;
      break;
    }
  if (!found) {
    fail = {lines.number() + 1, "the file ends before the size line 'rows columns entries'"};
    return std::nullopt;
  }
  const std::int64_t size_line = lines.number();
  std::int64_t rows = 0, cols = 0, nnz = 0;
  {
    tokens t(line);
    const char* what[3] = {"rows", "columns", "entries"};
    std::int64_t* out[3] = {&rows, &cols, &nnz};
    // At most 2^62 - 1, so that rows + 1 and the bounds below cannot overflow.
    constexpr std::int64_t cap = (std::int64_t{1} << 62) - 1;
    const std::int64_t limit[3] = {std::min(lim.max_dimension, cap),
                                   std::min(lim.max_dimension, cap),
                                   std::min(lim.max_entries, cap)};
    for (int w = 0; w < 3; ++w) {
      if (!t.next(word)) {
        fail = {size_line, fmt::format("the size line ends before the number of {}: expected "
                                       "'rows columns entries'",
                                       what[w])};
        return std::nullopt;
      }
      if (auto f = size_value(word, what[w], limit[w], size_line, *out[w])) {
        fail = *f;
        return std::nullopt;
      }
    }
    if (t.next(word)) {
      fail = {size_line, fmt::format("unexpected {} after the size line", shown(word))};
      return std::nullopt;
    }
  }
  if (symmetric && rows != cols) {
    fail = {size_line, fmt::format("a symmetric matrix must be square, not {} x {}", rows, cols)};
    return std::nullopt;
  }
  // The number of positions, saturated: the limits may allow a product past 63 bits.
  const std::int64_t positions = symmetric
                                     ? saturating_product(rows % 2 == 0 ? rows / 2 : rows,
                                                          rows % 2 == 0 ? rows + 1 : (rows + 1) / 2)
                                     : saturating_product(rows, cols);
  if (nnz > positions) {
    fail = {size_line, fmt::format("{} entries do not fit in a {} x {}{} matrix ({} positions)",
                                   nnz, rows, cols, symmetric ? " symmetric" : "", positions)};
    return std::nullopt;
  }

  try {
    // The entries. Each takes at least 4 bytes ("1 1\n"): reserve no more than the text holds.
    std::vector<entry> entries;
    const auto bound = std::min<std::int64_t>(nnz, static_cast<std::int64_t>(text.size() / 4) + 1);
    entries.reserve(static_cast<std::size_t>(symmetric ? 2 * bound : bound));
    std::int64_t count = 0;
    const char* value_name = kind == field::integer ? "an integer" : "a real number";
    while (lines.next(line)) {
      if (blank_or_comment(line)) continue;
      const std::int64_t at = lines.number();
      if (count == nnz) {
        fail = {at, fmt::format("more entries than the {} announced on line {}", nnz, size_line)};
        return std::nullopt;
      }
      tokens t(line);
      entry e{0, 0, 0.0, at};
      t.next(word);  // a line that is not blank has a first word
      if (auto f = index_value(word, "row", rows, at, e.row)) {
        fail = *f;
        return std::nullopt;
      }
      if (!t.next(word)) {
        fail = {at, fmt::format("the entry ends before its column index: expected 'row column{}'",
                                kind == field::pattern ? "" : " value")};
        return std::nullopt;
      }
      if (auto f = index_value(word, "column", cols, at, e.col)) {
        fail = *f;
        return std::nullopt;
      }
      if (kind != field::pattern) {
        if (!t.next(word)) {
          fail = {at, fmt::format("the entry ends before its value: expected {}", value_name)};
          return std::nullopt;
        }
        parsed r = parsed::ok;
        if (kind == field::integer) {
          std::int64_t v = 0;
          r = parse_int(word, v);
          e.value = static_cast<double>(v);
        } else {
          r = parse_real(word, e.value);
        }
        if (r != parsed::ok) {
          fail = {at, fmt::format("the value {} is {}", shown(word),
                                  r == parsed::out_of_range ? std::string("out of range")
                                                            : fmt::format("not {}", value_name))};
          return std::nullopt;
        }
      }
      if (t.next(word)) {
        fail = {at, fmt::format("unexpected {} after the entry", shown(word))};
        return std::nullopt;
      }
      entries.push_back(e);
      if (symmetric && e.row != e.col) entries.push_back({e.col, e.row, e.value, e.line});
      ++count;
    }
    if (count < nnz) {
      fail = {lines.number() + 1, fmt::format("the file ends after {} of the {} entries announced "
                                              "on line {}",
                                              count, nnz, size_line)};
      return std::nullopt;
    }

    // Sort by position (then line), and report the first line that repeats a position.
    std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) {
      return a.row != b.row ? a.row < b.row : a.col != b.col ? a.col < b.col : a.line < b.line;
    });
    const entry* repeat = nullptr;
    const entry* first = nullptr;
    for (std::size_t k = 1; k < entries.size(); ++k) {
      const auto& a = entries[k - 1];
      const auto& b = entries[k];
      if (a.row == b.row && a.col == b.col && a.line != b.line &&
          (repeat == nullptr || b.line < repeat->line)) {
        repeat = &b;
        first = &a;
      }
    }
    if (repeat != nullptr) {
      fail = {repeat->line,
              fmt::format("duplicate entry ({}, {}){}, already given on line {}", repeat->row + 1,
                          repeat->col + 1,
                          symmetric && repeat->row != repeat->col
                              ? fmt::format(" (the same as ({}, {}) in a symmetric matrix)",
                                            repeat->col + 1, repeat->row + 1)
                              : std::string(),
                          first->line)};
      return std::nullopt;
    }

    sparse_matrix::serial m;
    m.rows = rows;
    m.cols = cols;
    m.row_ptr.assign(static_cast<std::size_t>(rows) + 1, 0);
    m.col_idx.reserve(entries.size());
    if (kind != field::pattern) m.values.reserve(entries.size());
    for (const auto& e : entries) {
      ++m.row_ptr[static_cast<std::size_t>(e.row) + 1];
      m.col_idx.push_back(e.col);
      if (kind != field::pattern) m.values.push_back(e.value);
    }
    std::partial_sum(m.row_ptr.begin(), m.row_ptr.end(), m.row_ptr.begin());
    return m;
  } catch (const std::bad_alloc&) {
    fail = {size_line,
            fmt::format("not enough memory for a {} x {} matrix with {} entries", rows, cols, nnz)};
    return std::nullopt;
  }
}

}  // namespace

std::optional<sparse_matrix::serial> parse(std::string_view text, error& err, const limits& lim,
                                           std::vector<warning>* warnings) {
  failure fail{0, {}};
  auto m = parse_or_fail(text, lim, fail, warnings);
  if (!m) err = {fail.line, std::move(fail.message)};
  return m;
}

std::string format(const sparse_matrix::serial& m) {
  const bool values = !m.values.empty();
  fmt::memory_buffer out;
  fmt::format_to(std::back_inserter(out), "%%MatrixMarket matrix coordinate {} general\n",
                 values ? "real" : "pattern");
  fmt::format_to(std::back_inserter(out), "{} {} {}\n", m.rows, m.cols, m.col_idx.size());
  for (std::int64_t r = 0; r < m.rows; ++r)
    for (auto k = m.row_ptr[static_cast<std::size_t>(r)];
         k < m.row_ptr[static_cast<std::size_t>(r) + 1]; ++k) {
      const auto u = static_cast<std::size_t>(k);
      if (values)
        fmt::format_to(std::back_inserter(out), "{} {} {}\n", r + 1, m.col_idx[u] + 1, m.values[u]);
      else
        fmt::format_to(std::back_inserter(out), "{} {}\n", r + 1, m.col_idx[u] + 1);
    }
  return fmt::to_string(out);
}

sparse_matrix::serial read_serial(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  MAILROOM_CHECK(in.good(), "{}: cannot open the Matrix Market file: {}", path,
                 std::strerror(errno));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  MAILROOM_CHECK(!in.bad(), "{}: cannot read the Matrix Market file: {}", path,
                 std::strerror(errno));
  error err;
  std::vector<warning> warnings;
  auto m = parse(text, err, {}, &warnings);
  MAILROOM_CHECK(m.has_value(), "{}:{}: {}", path, err.line, err.message);
  for (const warning& w : warnings)
    fmt::print(stderr, "mailroom: warning: {}:{}: {}\n", path, w.line, w.message);
  return std::move(*m);
}

sparse_matrix read(const std::string& path) {
  sparse_matrix::serial whole;
  if (this_pe().rank() == 0) whole = read_serial(path);
  return sparse_matrix::scatter(whole, 0);
}

void write(const std::string& path, const sparse_matrix& m) {
  const auto whole = m.gather(0);
  if (this_pe().rank() == 0) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    MAILROOM_CHECK(out.good(), "{}: cannot create the Matrix Market file: {}", path,
                   std::strerror(errno));
    const std::string text = format(whole);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    MAILROOM_CHECK(!out.fail(), "{}: cannot write the Matrix Market file: {}", path,
                   std::strerror(errno));
  }
  mailroom::barrier();  // the file is complete before any PE returns
}

}  // namespace mailroom::matrix_market
