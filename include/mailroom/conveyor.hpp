// SPDX-License-Identifier: MIT
// The public aggregation layer: a typed conveyor in the style of Bale's, for programs that want
// to write their own push/pull/advance loops (the "conveyor" variant of every mini-app).
#pragma once

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/detail/signature.hpp"
#include "mailroom/detail/tasks.hpp"
#include "mailroom/pe.hpp"

#include <type_traits>

namespace mailroom {

/// Aggregates fixed-size items of type T to their destination PEs.
///
/// Typical loop (every PE):
///   while (conv.advance(i == n)) {
///     for (; i < n; ++i) if (!conv.push(dest(i), item(i))) break;
///     T item; pe from;
///     while (conv.pull(from, item)) use(from, item);
///   }
/// Construction is collective (every PE constructs its conveyors in the same order).
template <class T>
class conveyor {
  static_assert(std::is_trivially_copyable_v<T>,
                "conveyor<T>: T must be trivially copyable (it is copied byte-wise into "
                "aggregation buffers); send indices or handles instead of owning objects");

 public:
  /// (`loc`: where the program constructs it, for the check that every PE constructs the same.)
  explicit conveyor(source_location loc = source_location::current())
      : core_{false,
              detail::construction_signature(
                  detail::type_signature<conveyor, detail::box_of<T, conveyor>>, loc),
              sizeof(T)} {
    detail::conveyor_core::check_item_fits(sizeof(T), "conveyor item");
  }

  /// Queues `item` for `dest` (the PE first, as in `selector::send`). Returns false, without
  /// queueing, when the buffer for `dest` is full and `dest` has acknowledged too few of the
  /// earlier ones (or, for the own PE, too many arrivals wait to be pulled): advance(), pull,
  /// and retry. Never blocks.
  [[nodiscard]] bool push(pe dest, const T& item) noexcept {
    MAILROOM_CHECK(static_cast<unsigned>(dest.rank()) < static_cast<unsigned>(pes_),
                   "conveyor::push: PE {} is out of range [0, {})", dest.rank(), pes_);
    ++pushed_;
    return core_.template push<sizeof(T)>(dest.rank(), &item);
  }

  /// The earlier order of push's arguments (item first), kept for one minor version.
  template <class U = T>
    requires(!std::is_same_v<U, pe>)
  [[deprecated("use push(pe, item): the PE comes first, as in selector::send")]] [[nodiscard]] bool
  push(const T& item, pe dest) noexcept {
    return push(dest, item);
  }

  /// Takes the next arrived item, if any, and the PE it came from.
  [[nodiscard]] bool pull(pe& from, T& item) noexcept {
    while (true) {
      if (cursor_ != nullptr) {
        if (cursor_ < end_) {
          std::memcpy(&item, cursor_, sizeof(T));
          cursor_ += sizeof(T);
          from = pe(source_);
          return true;
        }
        // Forwarded items (node routing) each follow their origin PE; end_ is then the
        // buffer's start, so that the loop above is the same for every buffer.
        if (MAILROOM_UNLIKELY(cursor_ < origins_end_)) {
          std::uint32_t origin;
          std::memcpy(&origin, cursor_, 4);
          std::memcpy(&item, cursor_ + 4, sizeof(T));
          cursor_ += 4 + sizeof(T);
          from = pe(static_cast<int>(origin));
          return true;
        }
        cursor_ = nullptr;
        core_.pop_front();
      }
      if (!core_.has_arrivals()) return false;
      const auto& a = core_.front();
      cursor_ = a.begin();
      end_ = a.origins ? a.begin() : a.end();
      origins_end_ = a.origins ? a.end() : nullptr;
      source_ = a.source;
    }
  }

  /// Puts back the item last pulled (e.g. when the reply it asked for could not be pushed).
  void unpull() noexcept {
    MAILROOM_ASSERT(cursor_ != nullptr);
    cursor_ -= sizeof(T) + (origins_end_ != nullptr ? 4 : 0);
  }

  /// Makes progress. `done` says this PE will push no more. Returns false once every PE is done
  /// and every item destined to this PE has been pulled.
  bool advance(bool done) {
    // (A conveyor is worker 0's: push and pull from other workers would race with it.)
    if (MAILROOM_UNLIKELY(detail::t_worker > 0)) detail::check_runtime_thread("conveyor::advance");
    if (finished_) return false;
    const bool moved = detail::conveyor_core::progress_exchange();
    // Idle: since the last call MPI brought nothing, no push was queued and nothing was pulled
    // (the caller may be waiting for a credit with an item put back, or for replies).
    const std::uint64_t queued = pushed_ - core_.refused();
    detail::conveyor_core::idle_poll(!moved && queued == queued_at_advance_ &&
                                     cursor_ == cursor_at_advance_ &&
                                     core_.processed_items() == processed_at_advance_);
    queued_at_advance_ = queued;
    cursor_at_advance_ = cursor_;
    processed_at_advance_ = core_.processed_items();
    if (done && !core_.closed()) core_.close();
    if (!core_.closed()) {
      // Nothing pushed since the last call: the producer is waiting (e.g. for replies), so
      // ship what is partly filled rather than hold it until a buffer fills.
      if (pushed_ == pushed_at_advance_) core_.flush(false);
      pushed_at_advance_ = pushed_;
      return true;
    }
    // Ended here, and none of our buffers still waits for a credit (the caller may block in MPI
    // next). Once false, always false.
    finished_ = core_.step_stream() && cursor_ == nullptr && !core_.backlogged();
    return !finished_;
  }

  /// Sends partly filled buffers now (latency over aggregation).
  void flush() { core_.flush(false); }

 private:
  // Under MAILROOM_PROGRESS=thread, the main flow's turn as worker 0 for the conveyor's life: its
  // push, pull and advance move its traffic, and the progress thread stands by meanwhile.
  detail::runtime_turn turn_;
  detail::conveyor_core core_;
  int pes_ = detail::conveyor_core::job_pes();
  const std::byte* cursor_ = nullptr;
  bool finished_ = false;
  std::uint64_t pushed_ = 0, pushed_at_advance_ = 0;  // push calls, accepted or not
  std::uint64_t queued_at_advance_ = 0;  // accepted pushes: pushed_ less the core's refusals
  const std::byte* cursor_at_advance_ = nullptr;
  std::int64_t processed_at_advance_ = 0;
  const std::byte* end_ = nullptr;
  const std::byte* origins_end_ = nullptr;
  int source_ = 0;
};

}  // namespace mailroom
