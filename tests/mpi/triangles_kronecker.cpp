// SPDX-License-Identifier: MIT
// Triangle counting on Kronecker products of stars, whose counts are known in closed form: every
// variant of apps/triangles must return exactly kronecker_stars_triangles() on every PE.
#include "triangles/triangles.hpp"

#include <mailroom/generators.hpp>
#include <mailroom/mailroom.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <utility>
#include <vector>

namespace mr = mailroom;
namespace tri = mailroom::apps::triangles;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const bool root = mr::this_pe().rank() == 0;
  const std::vector<std::pair<const char*, std::int64_t (*)(const mr::sparse_matrix&)>> variants = {
      {"naive", tri::naive},
      {"bsp", tri::bsp},
      {"conveyor", tri::conveyor},
      {"selector", tri::selector},
      {"lambda", tri::lambda}};
  // One star (fewer vertices than PEs), several small products, and larger ones up to ~3000
  // vertices whose centre rows are long (many queries to one PE: buckets fill, buffers back up).
  const std::vector<std::vector<std::int64_t>> star_lists = {
      {1}, {2}, {3, 4}, {2, 2, 2}, {3, 4, 5}, {2, 3, 4, 5}, {6, 10, 12}, {20, 30}, {4, 4, 4, 4, 4}};
  int failures = 0;
  for (const auto& stars : star_lists) {
    const mr::sparse_matrix l = mr::kronecker_stars(stars);
    const std::int64_t want = mr::kronecker_stars_triangles(stars), nnz = l.global_nnz();
    for (const auto& [name, run] : variants) {
      const std::int64_t got = run(l);
      // Every PE's answer must be right, not only PE 0's.
      const std::int64_t wrong = mr::all_reduce(std::int64_t{got != want});
      failures += wrong != 0;
      if (root)
        fmt::print("stars {} ({} nonzeros): {:<8} {} triangles, expected {}{}\n",
                   fmt::join(stars, "x"), nnz, name, got, want,
                   wrong == 0 ? "" : fmt::format("  FAILED on {} PEs", wrong));
    }
  }
  if (root) fmt::print("{}\n", failures == 0 ? "PASSED" : "FAILED");
  return failures == 0 ? 0 : 1;
}
