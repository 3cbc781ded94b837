// SPDX-License-Identifier: MIT
// Reductions (Charm++'s concurrent-reductions experiment): each PE holds n elements split into k
// partitions; each partition is computed (one addition per element, plus optionally a random
// amount of extra work per partition and PE) and then summed element-wise over all PEs. With
// imbalance, one blocking all_reduce per partition makes every PE wait for the slowest at every
// partition (the sum of the maxima); non-blocking reductions let each PE run ahead (the maximum
// of the sums).
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace mailroom::apps::reductions {

struct problem {
  std::int64_t partitions = 1;  ///< k
  std::vector<std::int64_t> x;  ///< this PE's n elements
  std::int64_t addend = 0;      ///< what each element's one addition adds
  /// Extra additions per element of each partition on this PE (the imbalance; 0: none).
  std::vector<std::int64_t> extra;
  [[nodiscard]] std::size_t begin(std::int64_t part) const {
    return x.size() * static_cast<std::size_t>(part) / static_cast<std::size_t>(partitions);
  }
};

/// Computes partition `part` of y (y[i] = x[i] + addend), after its extra work.
void compute(const problem& pb, std::int64_t part, std::span<std::int64_t> y);

// Every variant leaves in `sum` (n elements) the element-wise sum over all PEs of their y.
// Collective: called on every PE.
void blocking(const problem& pb, std::span<std::int64_t> sum);     // a blocking all_reduce per part
void blocking_k1(const problem& pb, std::span<std::int64_t> sum);  // one all_reduce of everything
void pipelined(const problem& pb, std::span<std::int64_t> sum);    // non-blocking, futures

}  // namespace mailroom::apps::reductions
