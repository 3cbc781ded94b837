// SPDX-License-Identifier: MIT
// Matrix Market parsing without MPI: the valid files of the corpus in tests/data/mtx give the
// expected matrices (Bale's banner without its symmetry with a warning), every malformed one gives
// its line and message, format() and parse() round trip, and no truncation or corruption of a
// valid file crashes the parser.
#include <mailroom/matrix_market.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace mm = mailroom::matrix_market;
using serial = mailroom::sparse_matrix::serial;

std::string corpus(const std::string& name) {
  std::ifstream in(std::string(MAILROOM_MTX_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing corpus file " << name;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

serial parse_ok(std::string_view text) {
  mm::error err;
  auto m = mm::parse(text, err);
  EXPECT_TRUE(m.has_value()) << "line " << err.line << ": " << err.message;
  return m.value_or(serial{});
}

serial make(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> row_ptr,
            std::vector<std::int64_t> col_idx, std::vector<double> values = {}) {
  return serial{rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values)};
}

TEST(MatrixMarket, PatternGeneralIsSortedByRowThenColumn) {
  EXPECT_EQ(parse_ok(corpus("pattern_general.mtx")), make(3, 4, {0, 2, 3, 5}, {1, 3, 0, 0, 3}));
}

TEST(MatrixMarket, IntegerSymmetricIsExpandedWithTheDiagonalOnce) {
  EXPECT_EQ(parse_ok(corpus("integer_symmetric.mtx")),
            make(4, 4, {0, 3, 5, 6, 8}, {0, 1, 3, 0, 2, 1, 0, 3}, {7, -3, 9, -3, 12, 12, 9, 0}));
}

TEST(MatrixMarket, RealGeneralReadsEveryNumberForm) {
  EXPECT_EQ(parse_ok(corpus("real_general.mtx")),
            make(2, 3, {0, 2, 4}, {0, 2, 1, 2}, {1.5, -2.25e-3, 4, 100}));
}

TEST(MatrixMarket, CommentsAndBlankLinesAnywhereAfterTheBanner) {
  EXPECT_EQ(parse_ok(corpus("comments_and_blank_lines.mtx")),
            make(2, 2, {0, 1, 2}, {0, 1}, {-1, 0.5}));
}

TEST(MatrixMarket, SymmetricEntriesMayBeGivenAboveTheDiagonal) {
  EXPECT_EQ(parse_ok(corpus("symmetric_upper_given.mtx")),
            make(3, 3, {0, 2, 3, 5}, {1, 2, 0, 0, 2}));
}

TEST(MatrixMarket, EmptyMatrixAndMissingFinalNewline) {
  EXPECT_EQ(parse_ok(corpus("empty_matrix.mtx")), make(0, 0, {0}, {}));
  EXPECT_EQ(parse_ok(corpus("no_final_newline.mtx")), make(2, 2, {0, 0, 1}, {0}));
}

TEST(MatrixMarket, WindowsLineEndings) {
  EXPECT_EQ(parse_ok("%%MatrixMarket matrix coordinate real general\r\n% c\r\n2 2 1\r\n"
                     "2 1 3.5\r\n"),
            make(2, 2, {0, 0, 1}, {0}, {3.5}));
}

// Bale's write_matrix_mm leaves the symmetry out: read as general (both (1,2) and (2,1) are
// given, which as symmetric would be a duplicate), with one warning on the banner's line.
TEST(MatrixMarket, BaleBannerWithoutSymmetryIsReadAsGeneral) {
  struct bale_file {
    const char* name;
    serial expected;
  };
  for (const auto& [name, expected] :
       {bale_file{"bale_real.mtx", make(3, 3, {0, 1, 3, 4}, {1, 0, 2, 2}, {0.5, -1.25, 3, 1})},
        bale_file{"bale_pattern.mtx", make(2, 4, {0, 2, 3}, {0, 3, 2})}}) {
    mm::error err;
    std::vector<mm::warning> warnings;
    const auto m = mm::parse(corpus(name), err, {}, &warnings);
    ASSERT_TRUE(m.has_value()) << name << ": line " << err.line << ": " << err.message;
    EXPECT_EQ(*m, expected) << name;
    ASSERT_EQ(warnings.size(), 1U) << name;
    EXPECT_EQ(warnings[0].line, 1);
    EXPECT_EQ(warnings[0].message,
              "the banner has no symmetry field (as Bale writes it): read as general");
    EXPECT_EQ(parse_ok(corpus(name)), expected) << name << " without a list of warnings";
  }
}

// The file reader says so on stderr, once, naming the file; a complete banner says nothing.
TEST(MatrixMarket, ReadSerialWarnsOnceNamingTheFile) {
  const std::string bale = std::string(MAILROOM_MTX_DIR) + "/bale_real.mtx";
  testing::internal::CaptureStderr();
  const serial m = mm::read_serial(bale);
  const std::string said = testing::internal::GetCapturedStderr();
  EXPECT_EQ(m, parse_ok(corpus("bale_real.mtx")));
  EXPECT_EQ(said,
            "mailroom: warning: " + bale +
                ":1: the banner has no symmetry field (as Bale writes it): read as general\n");

  testing::internal::CaptureStderr();
  const serial g = mm::read_serial(std::string(MAILROOM_MTX_DIR) + "/real_general.mtx");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(g, parse_ok(corpus("real_general.mtx")));
}

// Only the symmetry may be left out: a banner of any other length, or with an unknown or
// misplaced word, is still an error on line 1, and warns of nothing.
TEST(MatrixMarket, OnlyTheSymmetryMayBeMissing) {
  const std::pair<const char*, const char*> banners[] = {
      {"%%MatrixMarket matrix coordinate", "the banner ends before its field"},
      {"%%MatrixMarket matrix", "the banner ends before its format"},
      {"%%MatrixMarket", "the banner ends before its object"},
      {"%%MatrixMarket matrix coordinate real general extra", "unexpected 'extra' after"},
      {"%%MatrixMarket matrix coordinate general", "unknown field 'general'"},
      {"%%MatrixMarket matrix coordinate boolean", "unknown field 'boolean'"},
      {"%%MatrixMarket matrix coordinate complex", "the complex field is not supported"},
      {"%%MatrixMarket matrix array real", "the array (dense) format is not supported"},
      {"%%MatrixMarket vector coordinate real", "unsupported object 'vector'"},
      {"%%MatrixMarket matrix coordinate real generale", "unknown symmetry 'generale'"}};
  for (const auto& [banner, message] : banners) {
    mm::error err;
    std::vector<mm::warning> warnings;
    EXPECT_FALSE(mm::parse(std::string(banner) + "\n1 1 0\n", err, {}, &warnings)) << banner;
    EXPECT_EQ(err.line, 1) << banner;
    EXPECT_NE(err.message.find(message), std::string::npos)
        << banner << ": " << err.message << "\nexpected to contain: " << message;
    EXPECT_TRUE(warnings.empty()) << banner;
  }
}

struct malformed {
  const char* file;
  std::int64_t line;
  const char* message;  // a part of the message
};

class MatrixMarketMalformed : public testing::TestWithParam<malformed> {};

TEST_P(MatrixMarketMalformed, GivesTheLineAndWhatWasExpected) {
  const auto& c = GetParam();
  mm::error err;
  const auto m = mm::parse(corpus(c.file), err);
  EXPECT_FALSE(m.has_value());
  EXPECT_EQ(err.line, c.line) << err.message;
  EXPECT_NE(err.message.find(c.message), std::string::npos)
      << "message: " << err.message << "\nexpected to contain: " << c.message;
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, MatrixMarketMalformed,
    testing::Values(
        malformed{"bad_empty_file.mtx", 1, "the file is empty"},
        malformed{"bad_banner.mtx", 1, "expected the banner '%%MatrixMarket matrix coordinate"},
        malformed{"bad_banner_short.mtx", 1, "the banner ends before its field"},
        malformed{"bad_banner_trailing.mtx", 1, "unexpected 'extra' after the banner"},
        malformed{"bad_banner_symmetry_without_field.mtx", 1, "unknown field 'general'"},
        malformed{"bad_vector_object.mtx", 1, "unsupported object 'vector'"},
        malformed{"bad_array_format.mtx", 1, "the array (dense) format is not supported"},
        malformed{"bad_complex_field.mtx", 1, "the complex field is not supported"},
        malformed{"bad_unknown_field.mtx", 1, "unknown field 'boolean'"},
        malformed{"bad_hermitian.mtx", 1, "hermitian matrices are not supported"},
        malformed{"bad_skew_symmetric.mtx", 1, "skew-symmetric matrices are not supported"},
        malformed{"bad_missing_size_line.mtx", 4, "the file ends before the size line"},
        malformed{"bad_size_line_word.mtx", 3, "the number of columns 'x' is not an integer"},
        malformed{"bad_size_line_short.mtx", 2, "the size line ends before the number of entries"},
        malformed{"bad_size_line_trailing.mtx", 2, "unexpected '7' after the size line"},
        malformed{"bad_negative_size.mtx", 2, "the number of rows -3 is negative"},
        malformed{"bad_overflowing_size.mtx", 2,
                  "the number of columns '99999999999999999999999' is too large"},
        malformed{"bad_size_over_limit.mtx", 2,
                  "the number of rows 2000000000 is too large (at most 1000000000)"},
        malformed{"bad_entries_over_limit.mtx", 2, "the number of entries 1000000001 is too large"},
        malformed{"bad_more_entries_than_positions.mtx", 2,
                  "5 entries do not fit in a 2 x 2 matrix (4 positions)"},
        malformed{"bad_symmetric_not_square.mtx", 2,
                  "a symmetric matrix must be square, not 2 x 3"},
        malformed{"bad_row_out_of_range.mtx", 4, "the row index '4' is out of range 1..3"},
        malformed{"bad_column_zero.mtx", 4, "the column index '0' is out of range 1..3"},
        malformed{"bad_index_not_integer.mtx", 4, "the row index '2.5' is not an integer"},
        malformed{"bad_too_few_entries.mtx", 6,
                  "the file ends after 2 of the 3 entries announced on line 2"},
        malformed{"bad_too_many_entries.mtx", 5, "more entries than the 2 announced on line 2"},
        malformed{"bad_non_numeric_value.mtx", 4, "the value 'abc' is not a real number"},
        malformed{"bad_fraction_in_integer.mtx", 4, "the value '1.5' is not an integer"},
        malformed{"bad_missing_value.mtx", 4, "the entry ends before its value"},
        malformed{"bad_missing_column.mtx", 3, "the entry ends before its column index"},
        malformed{"bad_trailing_garbage.mtx", 4, "unexpected 'extra' after the entry"},
        malformed{"bad_value_out_of_range.mtx", 3, "the value '1e999' is out of range"},
        malformed{"bad_duplicate.mtx", 6, "duplicate entry (2, 3), already given on line 4"},
        malformed{"bad_duplicate_symmetric_mirror.mtx", 5,
                  "duplicate entry (1, 2) (the same as (2, 1) in a symmetric matrix), already "
                  "given on line 3"}),
    [](const testing::TestParamInfo<malformed>& case_info) {
      std::string name = case_info.param.file;
      name = name.substr(0, name.find('.'));
      return name;
    });

TEST(MatrixMarket, IndexTooLargeForSixtyFourBits) {
  mm::error err;
  EXPECT_FALSE(
      mm::parse("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n"
                "1 99999999999999999999\n",
                err));
  EXPECT_EQ(err.line, 3);
  EXPECT_EQ(err.message, "the column index '99999999999999999999' is out of range 1..2");
}

// A caller reading untrusted files lowers the limits; huge limits never overflow the arithmetic.
TEST(MatrixMarket, CallerLimitsBoundTheSizes) {
  const std::string text = "%%MatrixMarket matrix coordinate pattern symmetric\n100 100 3\n";
  mm::error err;
  EXPECT_FALSE(mm::parse(text, err, mm::limits{99, 1000}));
  EXPECT_EQ(err.line, 2);
  EXPECT_EQ(err.message, "the number of rows 100 is too large (at most 99)");
  EXPECT_FALSE(mm::parse(text, err, mm::limits{100, 2}));
  EXPECT_EQ(err.message, "the number of entries 3 is too large (at most 2)");

  const mm::limits huge{std::numeric_limits<std::int64_t>::max(),
                        std::numeric_limits<std::int64_t>::max()};
  EXPECT_FALSE(
      mm::parse("%%MatrixMarket matrix coordinate pattern symmetric\n"
                "4611686018427387903 4611686018427387903 4611686018427387903\n",
                err, huge));
  EXPECT_EQ(err.line, 3);  // the sizes are accepted; the entries are missing
  EXPECT_FALSE(
      mm::parse("%%MatrixMarket matrix coordinate pattern general\n"
                "4611686018427387904 1 0\n",
                err, huge));
  EXPECT_EQ(err.message,
            "the number of rows 4611686018427387904 is too large (at most 4611686018427387903)");
}
TEST(MatrixMarket, FormatWritesCoordinateGeneral) {
  EXPECT_EQ(mm::format(make(2, 3, {0, 2, 3}, {0, 2, 1})),
            "%%MatrixMarket matrix coordinate pattern general\n2 3 3\n1 1\n1 3\n2 2\n");
  EXPECT_EQ(mm::format(make(2, 2, {0, 1, 1}, {1}, {-0.125})),
            "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 -0.125\n");
}

// Random matrices, with and without values (the values chosen to need every digit), survive
// format then parse exactly.
TEST(MatrixMarket, FormatThenParseRoundTrips) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 40; ++trial) {
    const std::int64_t rows = static_cast<std::int64_t>(rng() % 30),
                       cols = 1 + static_cast<std::int64_t>(rng() % 30);
    const bool values = trial % 2 == 1;
    serial m{rows, cols, {0}, {}, {}};
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c)
        if (rng() % 4 == 0) {
          m.col_idx.push_back(c);
          if (values)
            m.values.push_back(std::ldexp(static_cast<double>(rng()) - 9.2e18,
                                          static_cast<int>(rng() % 200) - 100));
        }
      m.row_ptr.push_back(static_cast<std::int64_t>(m.col_idx.size()));
    }
    EXPECT_EQ(parse_ok(mm::format(m)), m) << "trial " << trial;
  }
}

// Every prefix of a valid file, and many corrupted copies, parse or fail with a line inside the
// text (or just after it): never a crash.
TEST(MatrixMarket, TruncatedAndCorruptedFilesNeverCrash) {
  std::mt19937_64 rng(7);
  const char noise[] = "0123456789 -+.eE%\n\t\rx\0";
  for (const char* file : {"integer_symmetric.mtx", "real_general.mtx",
                           "comments_and_blank_lines.mtx", "pattern_general.mtx"}) {
    const std::string text = corpus(file);
    const auto lines = static_cast<std::int64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    auto check = [&](const std::string& t) {
      mm::error err;
      if (!mm::parse(t, err)) {
        EXPECT_GE(err.line, 1) << err.message;
        EXPECT_LE(err.line, lines + 1) << err.message;
        EXPECT_FALSE(err.message.empty());
      }
    };
    for (std::size_t n = 0; n <= text.size(); ++n) check(text.substr(0, n));
    for (int trial = 0; trial < 2000; ++trial) {
      std::string t = text;
      for (int k = 0; k < 1 + trial % 3; ++k)
        t[rng() % t.size()] = noise[rng() % (sizeof noise - 1)];
      check(t);
    }
  }
}

}  // namespace
