// SPDX-License-Identifier: MIT
// Message reductions at the sender (mailbox_spec::reduce; Active Pebbles): a direct-mapped cache
// per reducing mailbox of the messages worker 0 sends, in which a message to a PE that already
// holds one of the same key is combined instead of sent. Held messages leave when evicted, and
// all of them before the mailbox's component may terminate (selector_core::holding_reduced) and
// at every idle flush and quiesce (selector_core::flush_partial).
#pragma once

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/error.hpp"

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mailroom::detail {

/// What a mailbox that does not reduce holds in its cache's place.
struct no_reduce_cache {};

/// The cache of a mailbox of T whose handler H is a reducing<...> (key and combine).
template <class T, class H>
class reduce_cache {
 public:
  /// `slots` rounded down to a power of two (MAILROOM_REDUCE_SLOTS).
  void resize(std::uint64_t slots) {
    cache_.resize(std::bit_floor(std::max<std::uint64_t>(slots, 1)));
    slots_ = cache_.data();
    mask_ = cache_.size() - 1;
  }
  /// Whether the next send skips the cache (it missed too often of late): then the message is
  /// pushed as it is, as to a mailbox that does not reduce.
  [[gnu::always_inline]] bool bypassed() noexcept {
    if (bypass_left_ == 0) return false;
    --bypass_left_;
    return true;
  }
  /// A send of msg to dest (not bypassed): combined into the message of the same key and PE
  /// that the cache holds, or held in its slot. True when a message must be pushed now, as
  /// (out_dest, out): the one it evicted from the slot.
  [[gnu::always_inline]] bool hold(H& h, conveyor_core& c, int dest, const T& msg, int& out_dest,
                                   T& out) {
    const std::uint64_t key = h.key(msg);
    entry& e = slots_[slot_of(key, dest)];
    const bool hit = e.dest == dest && e.key == key;
    if (MAILROOM_UNLIKELY(--trial_left_ == 0)) judge(c, hit);
    if (hit) {
      h.combine(e.msg, msg);
      ++trial_hits_;  // (added to the conveyor's combined_items per window: judge, flush)
      return false;
    }
    const bool evicts = e.dest >= 0;
    if (evicts) {
      out_dest = e.dest;
      out = e.msg;
    } else {
      ++held_;
    }
    e.key = key;
    e.dest = dest;
    e.msg = msg;
    return evicts;
  }
  /// Pushes the messages held (as many as credits allow): true when none is left.
  bool flush(conveyor_core& c) {
    c.combined_items += trial_hits_;
    trial_hits_ = 0;
    for (; held_ > 0 && flush_at_ < cache_.size(); ++flush_at_) {
      entry& e = cache_[flush_at_];
      if (e.dest < 0) continue;
      if (!c.template push<sizeof(T)>(e.dest, &e.msg)) return false;
      e.dest = -1;
      --held_;
    }
    flush_at_ = 0;
    return held_ == 0;
  }
  [[nodiscard]] bool holds() const noexcept { return held_ > 0; }

 private:
  struct entry {
    std::uint64_t key = 0;
    int dest = -1;  // -1: empty
    T msg{};
  };
  [[nodiscard]] std::size_t slot_of(std::uint64_t key, int dest) const noexcept {
    const std::uint64_t h =
        (key ^ (static_cast<std::uint64_t>(dest) << 40)) * 0x9e3779b97f4a7c15ULL;
    return static_cast<std::size_t>(h >> 32) & mask_;
  }
  // The cache costs a random access per send: where it combines fewer than 1 send in 32 over a
  // window of k_window sends, it is bypassed for the next 15 windows, then tried again; each
  // trial in a row that fails doubles the wait, up to 1,023 windows (a trial's sends cost the
  // most: its slots are cold), and one that pays resets it.
  static constexpr std::uint32_t k_window = 4096, k_most_windows = 1023;
  [[gnu::noinline]] void judge(conveyor_core& c, bool hit) {
    const std::uint32_t hits = trial_hits_ + (hit ? 1 : 0);
    if (hits * 32 < k_window) {
      bypass_left_ = backoff_ * k_window;
      backoff_ = std::min(2 * backoff_ + 1, k_most_windows);
    } else {
      backoff_ = 15;
    }
    c.combined_items += trial_hits_;  // (a hit now is counted with the next window)
    trial_left_ = k_window;
    trial_hits_ = 0;
  }

  std::vector<entry> cache_;
  entry* slots_ = nullptr;  // cache_.data()
  std::size_t mask_ = 0;    // cache_.size() - 1
  std::uint32_t held_ = 0, trial_left_ = k_window, trial_hits_ = 0, bypass_left_ = 0;
  std::uint32_t backoff_ = 15;  // windows to bypass after the next trial that fails
  std::size_t flush_at_ = 0;
};

}  // namespace mailroom::detail
