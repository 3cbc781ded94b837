// SPDX-License-Identifier: MIT
// PointerChase (Active Pebbles): the PEs form one random ring; every PE starts `chains` small
// messages, each relayed from PE to PE along the ring for `hops` hops, the next PE read from the
// table of the PE the message is on. Latency-bound with one chain per PE; with many, the hops of
// different chains share buffers. Every PE handles exactly chains x hops hops. One header for
// the variants, each in its own file.
#pragma once

#include <mailroom/mailroom.hpp>

#include <cstdint>

namespace mailroom::apps::pointer_chase {

struct problem {
  std::int64_t hops = 0;    ///< hops per chain
  std::int64_t chains = 0;  ///< chains started by each PE
  /// Each PE's successor on the ring, at index 0 on that PE (its "pointer"; symmetric).
  symmetric_array<int> next;
  /// At index 0 of each PE (symmetric; zeroed before each run): the hops it handled, and for
  /// the chains that ended on it, the sum of (their first PE + 1).
  symmetric_array<std::int64_t> handled, ended;
};

/// What a message carries: the hops its chain has left, and the PE that started it.
struct hop {
  std::int64_t left, origin;
};

// Every variant relays every PE's chains for their hops, counting them in handled[0] where they
// land, and records each chain's origin in ended[0] where its last hop lands (naive's hops carry
// nothing: it counts them only). Collective: called on every PE.
void naive(const problem& pb);     // one-sided: an atomic add on the next PE's arrival count
void conveyor(const problem& pb);  // mailroom::conveyor loop
void selector(const problem& pb);  // a typed mailbox that sends to itself
void lambda(const problem& pb);    // a closure that sends the next closure
/// The floor: the same number of hops walked through a table in this PE's memory (a ring of
/// 4,096 entries), no communication.
void local(const problem& pb);

}  // namespace mailroom::apps::pointer_chase
