// Random permutation (Bale's "randperm"): a uniformly random permutation of 0..N-1 by dart
// throwing into a distributed array of twice the size. One header for the variants.
#pragma once

#include <mailroom/mailroom.hpp>

namespace mailroom::apps::randperm {

// Every variant returns this PE's part of a uniformly random permutation of 0..N-1, where
// N = n_per_pe * P: the permutation is the concatenation of the PEs' parts in PE order (as in
// Bale: each PE throws its n_per_pe values as darts at random free slots of a target array of
// 2N slots distributed cyclically, a dart that hits a taken slot is thrown again, and each PE
// then compacts the darts that landed in its slots, in slot order). Deterministic given the seed
// and P. Collective.
std::vector<std::int64_t> naive(std::int64_t n_per_pe, std::uint64_t seed);     // one-sided CAS
std::vector<std::int64_t> bsp(std::int64_t n_per_pe, std::uint64_t seed);       // supersteps
std::vector<std::int64_t> conveyor(std::int64_t n_per_pe, std::uint64_t seed);  // conveyors
std::vector<std::int64_t> selector(std::int64_t n_per_pe, std::uint64_t seed);  // typed messages
std::vector<std::int64_t> lambda(std::int64_t n_per_pe, std::uint64_t seed);    // lambdas

}  // namespace mailroom::apps::randperm
