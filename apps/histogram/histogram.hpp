// SPDX-License-Identifier: MIT
// Histogram (Bale's "histo"): every PE adds 1 to random counters of a table distributed
// cyclically over the PEs. Global slot g lives on PE g % P at local offset g / P. One header for
// the variants, each in its own file so that their lengths can be compared.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <vector>

namespace mailroom::apps::histogram {

struct problem {
  std::int64_t table_per_pe = 0;    ///< counters per PE
  std::vector<std::int64_t> index;  ///< this PE's updates, as global slots in [0, table_per_pe*P)
};

// Every variant (but local) applies every PE's updates: afterwards counts[l] on PE p holds the
// number of updates, from all PEs, to global slot l * P + p. `counts` has table_per_pe entries
// per PE, is symmetric, and is zeroed before each run. Collective: called on every PE.
void naive(const problem& pb, symmetric_array<std::int64_t> counts);     // MPI one-sided atomics
void bsp(const problem& pb, symmetric_array<std::int64_t> counts);       // MPI_Alltoallv supersteps
void conveyor(const problem& pb, symmetric_array<std::int64_t> counts);  // mailroom::conveyor loop
void selector(const problem& pb, symmetric_array<std::int64_t> counts);  // typed actor messages
void lambda(const problem& pb, symmetric_array<std::int64_t> counts);    // lambda messages
void dist(const problem& pb, symmetric_array<std::int64_t> counts);      // selector by cyclic
// message reductions: at<int64_t>{1, slot} to a mailbox that adds the counts of one slot at the
// sender (mailbox_spec::reduce)
void reduce(const problem& pb, symmetric_array<std::int64_t> counts);
void counted(const problem& pb, symmetric_array<std::int64_t> counts);  // reduce's, not reducing
// lambda messages bound to one handler (selector::bind)
void bound(const problem& pb, symmetric_array<std::int64_t> counts);
/// The floor: the same loop with no communication, every update applied to this PE's table at
/// offset g / P. Afterwards counts holds this PE's own updates only.
void local(const problem& pb, symmetric_array<std::int64_t> counts);

}  // namespace mailroom::apps::histogram
