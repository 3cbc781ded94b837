// The untyped conveyor: one aggregation buffer per destination PE, credits per destination (at
// most `credits` buffers unacknowledged; more wait in a backlog), counts for termination, the
// queue of arrived buffers, and the end-of-stream protocol (exact counts by one non-blocking
// reduce-scatter). The typed conveyor<T> and the runtime's mailboxes are built on it.
#pragma once

#include "mailroom/detail/exchange.hpp"
#include "mailroom/error.hpp"

#include <cstring>
#include <type_traits>
#include <deque>

namespace mailroom::detail {

/// One arrived buffer: items start after the header.
struct arrival {
  std::byte* buf;
  int source;
  [[nodiscard]] const buffer_header& header() const noexcept {
    return *reinterpret_cast<const buffer_header*>(buf);
  }
  [[nodiscard]] const std::byte* begin() const noexcept { return buf + k_header_bytes; }
  [[nodiscard]] const std::byte* end() const noexcept { return buf + header().bytes; }
};

/// Whether pushes may go to the credit backlog instead of refusing: true while handlers run,
/// which must never block (the runtime pauses a mailbox whose successors are backlogged).
extern bool g_may_spill;

class conveyor_core {
 public:
  enum class stream { open, flushing, counting, draining, ended };

  /// Collective. With delta_records, the conveyor takes push_delta/push_whole records (runs
  /// per tag) and keeps the per-destination state they need.
  explicit conveyor_core(bool delta_records = false);
  ~conveyor_core();
  conveyor_core(const conveyor_core&) = delete;
  conveyor_core& operator=(const conveyor_core&) = delete;

  /// Appends an item of N bytes for `dest`. False (nothing appended) when the buffer for dest is
  /// full and cannot be sent yet (no credit for dest, or too many own-PE arrivals unhandled):
  /// call progress and try again.
  template <std::size_t N>
  [[nodiscard]] bool push(int dest, const void* item) noexcept {
    fill& f = fills_[static_cast<std::size_t>(dest)];
    if (MAILROOM_UNLIKELY(f.used + N > capacity_)) {
      if (!make_room(dest, N)) return false;
    }
    std::memcpy(f.buf + f.used, item, N);
    f.used += static_cast<std::uint32_t>(N);
    ++f.items;
    return true;
  }

  /// Largest record, in 8-byte words, that push_delta codes (larger ones go whole).
  static constexpr std::size_t k_delta_words = 16;
  /// The mask of a record of W words.
  template <std::size_t W>
  using delta_mask_t = std::conditional_t<(W <= 8), std::uint8_t, std::uint16_t>;

  /// Appends one record of W 8-byte words under `tag` (lambda messages: the handler id and the
  /// closure), delta-coded: consecutive records with the same tag for the same destination form
  /// a run [tag][count], and each record is a W-bit mask plus only the words that differ from
  /// the previous record of the run (the first is compared with zeros). Captures that every
  /// message shares (array handles, selector references) thus cross the wire once per run.
  /// Requires a conveyor constructed with delta records.
  template <std::size_t W>
  [[nodiscard]] bool push_delta(int dest, std::uint32_t tag, const std::uint64_t* words) noexcept {
    static_assert(W >= 1 && W <= k_delta_words);
    using mask_t = delta_mask_t<W>;
    constexpr std::size_t worst = 8 + sizeof(mask_t) + 8 * W;
    fill& f = fills_[static_cast<std::size_t>(dest)];
    if (MAILROOM_UNLIKELY(f.used + worst > capacity_)) {
      if (!make_room(dest, worst)) return false;
    }
    delta_state& st = delta_[static_cast<std::size_t>(dest)];
    if (st.tag != tag || st.count_at == 0) {
      open_run(f, st, tag);
      for (std::size_t k = 0; k < W; ++k) st.last[k] = 0;
    }
    ++f.items;
    std::byte* rec = f.buf + f.used;
    std::byte* out = rec + sizeof(mask_t);
    mask_t mask = 0;
    for (std::size_t k = 0; k < W; ++k) {
      if (words[k] != st.last[k]) {  // well predicted: the same captures change every time
        mask = static_cast<mask_t>(mask | (mask_t{1} << k));
        std::memcpy(out, &words[k], 8);
        out += 8;
        st.last[k] = words[k];
      }
    }
    std::memcpy(rec, &mask, sizeof(mask_t));
    f.used = static_cast<std::uint32_t>(out - f.buf);
    return true;
  }

  /// Appends one record of N bytes under `tag`, whole, in the same run format (records too large
  /// for delta coding). Stride is N rounded up to 8.
  template <std::size_t Stride, std::size_t N>
  [[nodiscard]] bool push_whole(int dest, std::uint32_t tag, const void* payload) noexcept {
    static_assert(Stride >= N);
    constexpr std::size_t worst = 8 + Stride;
    fill& f = fills_[static_cast<std::size_t>(dest)];
    if (MAILROOM_UNLIKELY(f.used + worst > capacity_)) {
      if (!make_room(dest, worst)) return false;
    }
    delta_state& st = delta_[static_cast<std::size_t>(dest)];
    if (st.tag != tag || st.count_at == 0) open_run(f, st, tag);
    ++f.items;
    std::memcpy(f.buf + f.used, payload, N);
    f.used += static_cast<std::uint32_t>(Stride);
    return true;
  }

  /// Ships every partly filled buffer. With force, never refuses (buffers without a credit go
  /// to the backlog; used at end of stream and before termination waves); without, skips
  /// destinations without a credit and returns false if it skipped any.
  bool flush(bool force);
  /// Buffers waiting for a credit.
  [[nodiscard]] bool backlogged() const noexcept { return !backlog_.empty(); }
  /// `dest` acknowledged one buffer: send the next one waiting for it, if any.
  void credit(int dest) noexcept;

  [[nodiscard]] bool has_arrivals() const noexcept { return !arrivals_.empty(); }
  [[nodiscard]] std::size_t arrivals() const noexcept { return arrivals_.size(); }
  [[nodiscard]] const arrival& front() const noexcept { return arrivals_.front(); }
  /// Releases the front buffer and counts its items as processed.
  void pop_front() noexcept;

  /// Items handed to the transport (or the local queue), and items processed, on this PE.
  [[nodiscard]] std::int64_t sent_items() const noexcept { return sent_items_; }
  [[nodiscard]] std::int64_t processed_items() const noexcept { return processed_items_; }
  /// Pushes refused so far (counted on the slow path only: the fast path stays as it is).
  [[nodiscard]] std::uint64_t refused() const noexcept { return refused_; }

  /// End of stream: this PE pushes nothing more. Then step() runs flush, the count exchange
  /// and the drain; ended() once every item destined here has been processed.
  void close() noexcept;
  /// Advances the end-of-stream protocol; returns true once ended.
  bool step_stream();
  [[nodiscard]] stream state() const noexcept { return state_; }
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] bool closed() const noexcept { return state_ != stream::open; }

  /// Called by the exchange when a buffer for this conveyor arrives.
  void deliver(int source, std::byte* buf) noexcept;

 private:
  struct fill {
    std::byte* buf = nullptr;
    std::uint32_t used = 0;
    std::uint32_t items = 0;
  };
  struct delta_state {
    std::uint32_t tag = 0;
    std::uint32_t count_at = 0;     ///< offset of the open run's count in the buffer; 0: no run
    std::uint32_t items_before = 0; ///< the buffer's items when the run opened
    std::uint64_t last[k_delta_words] = {};
  };
  // Writes the open run's count (its records are the buffer's items since it opened): once per
  // run, not per record.
  static void close_run(fill& f, delta_state& st) noexcept {
    if (st.count_at == 0) return;
    const std::uint32_t count = f.items - st.items_before;
    std::memcpy(f.buf + st.count_at, &count, 4);
    st.count_at = 0;
  }
  // Starts a run [tag][count] at the end of the buffer, closing the one before.
  static void open_run(fill& f, delta_state& st, std::uint32_t tag) noexcept {
    close_run(f, st);
    std::memcpy(f.buf + f.used, &tag, 4);
    st.tag = tag;
    st.count_at = f.used + 4;
    st.items_before = f.items;
    f.used += 8;
  }
  /// Slow path of a push of `need` bytes: ships the full buffer (or refuses), gets a new one.
  bool make_room(int dest, std::size_t need) noexcept;
  [[nodiscard]] bool can_ship(int dest) const noexcept;
  void ship(int dest) noexcept;

  exchange& ex_;
  std::uint32_t id_;
  std::uint32_t capacity_;
  int me_;
  std::vector<fill> fills_;
  std::vector<delta_state> delta_;  // per destination, for delta-record conveyors only
  std::vector<std::int64_t> sent_to_;
  std::vector<std::uint32_t> outstanding_;             // unacknowledged buffers per dest
  std::deque<std::pair<int, std::byte*>> backlog_;     // full buffers waiting for a credit
  std::uint32_t credits_;
  std::deque<arrival> arrivals_;
  std::int64_t sent_items_ = 0, received_items_ = 0, processed_items_ = 0;
  std::uint64_t refused_ = 0;
  std::int64_t expected_ = -1;
  stream state_ = stream::open;
  transport::collective_context collective_;
};

}  // namespace mailroom::detail
