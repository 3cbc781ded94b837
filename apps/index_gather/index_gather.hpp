// SPDX-License-Identifier: MIT
// Index-gather (Bale's "ig"): every PE reads random elements of a table distributed cyclically
// over the PEs. Global element g lives on PE g % P at local offset g / P. One header for the
// variants, each in its own file so that their lengths can be compared.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <vector>

namespace mailroom::apps::index_gather {

struct problem {
  std::int64_t table_per_pe = 0;    ///< table elements per PE
  std::vector<std::int64_t> index;  ///< this PE's reads, as global indices in [0, table_per_pe*P)
};

// Every variant (but local) sets out[i] to the value of global element index[i], read from the
// table of the PE that owns it. `table` has table_per_pe entries per PE (read only), `out` has
// index.size() entries per PE (written); both symmetric; out is set to -1 before each run.
// Collective: called on every PE.
void naive(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out);  // MPI_Get one element at a time
void bsp(const problem& pb, symmetric_array<std::int64_t> table,
         symmetric_array<std::int64_t> out);  // request/reply MPI_Alltoallv supersteps
void conveyor(const problem& pb, symmetric_array<std::int64_t> table,
              symmetric_array<std::int64_t> out);  // two mailroom::conveyor<T>, Bale's loop
void selector(const problem& pb, symmetric_array<std::int64_t> table,
              symmetric_array<std::int64_t> out);  // request/reply selector, typed messages
void lambda(const problem& pb, symmetric_array<std::int64_t> table,
            symmetric_array<std::int64_t> out);  // lambda messages
void dist(const problem& pb, symmetric_array<std::int64_t> table,
          symmetric_array<std::int64_t> out);  // selector by mailroom::cyclic
// lambda messages bound to one handler (selector::bind)
void bound(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out);
void gather(const problem& pb, symmetric_array<std::int64_t> table,
            symmetric_array<std::int64_t> out);  // mailroom::gather (aggregated reads)
/// The floor: the same loop reading this PE's own table at offset index[i] / P.
void local(const problem& pb, symmetric_array<std::int64_t> table,
           symmetric_array<std::int64_t> out);

}  // namespace mailroom::apps::index_gather
