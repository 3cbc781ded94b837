// SPDX-License-Identifier: MIT
// Random permutation (Bale's "randperm"): a uniformly random permutation of 0..N-1 by dart
// throwing into a distributed array of twice the size. One header for the variants.
#pragma once

#include <mailroom/mailroom.hpp>

#include "common/driver.hpp"

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
/// The floor: the same throws with every slot on this PE (global slot s at offset s / P of its
/// own 2 n_per_pe slots): a random permutation of this PE's own darts, n_per_pe * me up to
/// n_per_pe * (me + 1) - 1. No communication.
std::vector<std::int64_t> local(std::int64_t n_per_pe, std::uint64_t seed);

// Shared by the variants. A dart is one word: its value plus k_missed per missed throw. Where
// it lands is a pure function of that word, and the smaller value keeps a contested slot (an
// empty slot, -1, loses to any), so every variant returns the same permutation, whatever the
// order in which darts arrive: the one of throwing the darts one by one in value order.
inline constexpr std::int64_t k_missed = std::int64_t{1} << 40;
inline constexpr std::int64_t k_value = k_missed - 1;
/// The global slot, in [0, slots), that dart d's current throw lands in.
inline std::int64_t slot_of(std::int64_t d, std::uint64_t seed, std::int64_t slots) {
  return static_cast<std::int64_t>(mix(static_cast<std::uint64_t>(d), seed)) % slots;
}

}  // namespace mailroom::apps::randperm
