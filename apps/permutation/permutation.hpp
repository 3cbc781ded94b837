// SPDX-License-Identifier: MIT
// Permutation (Active Pebbles): arrays data, perm and data_perm of N elements per PE, global index
// g on PE g % P at local index g / P (mailroom::cyclic); data and perm are random permutations of
// [0, N x P). The kernel sets data_perm[perm[data[i]]] = i for every global i in two rounds: i's
// PE asks the owner of k = data[i] for j = perm[k] (a request and its reply), then sends i to the
// owner of j, which stores it. One header for the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <vector>

namespace mailroom::apps::permutation {

struct problem {
  std::vector<std::int64_t> data;  ///< this PE's part of data, by local index (read here only)
  distributed<std::int64_t> perm;  ///< perm over the N x P indices (read where it lives)
};

// Every variant (but local) sets data_perm[perm[data[i]]] = i for every global index i of every
// PE; data_perm is distributed as perm and set to -1 before each run. Collective: called on every
// PE; data_perm is whole when it returns on every PE.
void naive(const problem& pb, distributed<std::int64_t> data_perm);     // one-sided get, then put
void conveyor(const problem& pb, distributed<std::int64_t> data_perm);  // mailroom::conveyor loop
void selector(const problem& pb, distributed<std::int64_t> data_perm);  // typed messages
void lambda(const problem& pb, distributed<std::int64_t> data_perm);    // lambda messages
/// The floor: the same two rounds over this PE's own parts, global index k read or written at
/// local index k / P here: data_perm[perm[data[l] / P] / P] = i for l in order (the last write to
/// a slot stays). No communication.
void local(const problem& pb, distributed<std::int64_t> data_perm);

}  // namespace mailroom::apps::permutation
