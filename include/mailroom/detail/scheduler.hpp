// SPDX-License-Identifier: MIT
// The per-PE scheduler behind the actor API: the live selectors, the progress engine, the
// handler context flag and the stack of finish scopes. Not API.
#pragma once

#include "mailroom/detail/conveyor_core.hpp"
#include "mailroom/detail/send_context.hpp"
#include "mailroom/detail/tasks.hpp"
#include "mailroom/future.hpp"
#include "mailroom/pe.hpp"
#include "mailroom/termination.hpp"

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mailroom::transport {
class request;  // (src/transport/transport.hpp)
}  // namespace mailroom::transport

namespace mailroom {
class team;
}

namespace mailroom::detail {

/// One mailbox of a selector, as the scheduler sees it.
class mailbox_base {
 public:
  /// With delta_records, the mailbox's conveyor takes delta-coded records (lambda messages);
  /// without, items of `item_bytes`. `signature`: the mailbox's (detail/signature.hpp).
  /// Over a team, `team` gives its lanes (next_team_mailbox); null: over the job.
  mailbox_base(bool delta_records, std::uint32_t signature, std::size_t item_bytes,
               const team_lanes* team);
  virtual ~mailbox_base() = default;
  /// Runs the handler on every item of the front arrival, then releases it.
  virtual void process_front() = 0;
  /// Runs the handler on every entry of a local block: sends of a pool worker to this PE
  /// (typed: [message]; lambdas: runs [stride][count][invoke][closures]), from this PE.
  virtual void run_local(const stage_block& b) = 0;
  /// Pushes the entries of a block that a pool worker staged, from `at` on (advanced); false
  /// when a push is refused for want of a credit (the rest waits for the next poll).
  virtual bool drain(stage_block& b, std::uint32_t& at) = 0;
  /// A reducing mailbox (mailbox_spec::reduce): pushes the messages its cache holds back, as
  /// credits allow; true when none is left. Whether it holds any.
  virtual bool flush_reduced() { return true; }
  [[nodiscard]] virtual bool holds_reduced() const noexcept { return false; }
  /// selector::flush: the messages a reducing cache holds (as credits allow), then every partly
  /// filled buffer, shipped now.
  void flush_now() {
    if (holds_reduced()) (void)flush_reduced();
    (void)conveyor.flush(true);
  }

  conveyor_core conveyor;
  /// Keeps what follows off the conveyor's cache lines. Padding rather than alignas(64): an
  /// over-aligned mailbox makes every function that holds a selector on its stack realign its
  /// frame, which takes a register for the frame pointer from the user's send loop.
  std::byte apart_from_conveyor[k_cache_line] = {};
  /// Where sends may come from now, as scheduler::k_from_user and k_from_handler bits: from
  /// user code while the mailbox is an entry not yet done, from handlers until the runtime
  /// closes it on this PE. Read by the pool workers' sends too: on cache lines of its own
  /// with the staging's slots (which they read per send), away from what worker 0 writes per
  /// buffer (the conveyor's state, the staging's queue). Sharing one line with them cost a pool
  /// worker's send about 8 ns (1 PE x 2 workers, histogram).
  std::atomic<std::uint8_t> accepts;
  /// The same for the send fast path, as one bound per value of sending_from (1, 2, 4 and 8):
  /// the mailbox's PEs (the team's members over a team) where it accepts sends from there,
  /// else 0. A send compares its destination with its context's bound, which checks both at
  /// once. Pool workers' bounds stay 0 (their sends take the slow path, which stages them), so
  /// they read entries that no thread writes; the others are written and read by worker 0.
  std::int32_t send_limit[9] = {};
  /// Sets accepts and send_limit (worker 0).
  void set_accepts(std::uint8_t bits) noexcept;
  /// What pool workers sent to it and worker 0 has not yet pushed.
  staging staged;
  /// Its arrivals go to tasks, buffer by buffer (mailbox(handler, concurrent), several workers).
  bool concurrent_handlers = false;
  /// selector::priority: of the mailboxes with arrivals at a poll, higher ones are handled first.
  int priority = 0;
  /// selector::disable: its arrivals (and the pool workers' blocks to this PE) wait unhandled
  /// until enable(), and it does not close on this PE meanwhile. Set by worker 0, read by any.
  std::atomic<bool> disabled{false};
  /// Arrivals handed to tasks and not yet handled: the mailbox pauses at a few per worker.
  std::atomic<int> in_hands{0};

  /// This PE as the `from` of its own sends (its rank in the team) and as their source.
  int self_from = 0, self_source = 0;
  /// With several workers, held by the worker that runs this mailbox's handlers now: worker 0 on
  /// the arrivals, any worker on local blocks (what pool workers sent to this PE, handled where
  /// they are, without the conveyor), so that they run one at a time (the actor guarantee). A
  /// concurrent mailbox takes none. Taken once per buffer or block, never per message.
  std::atomic<bool> handling{false};
  /// Polls of worker 0 that left the local blocks to a pool worker (see handle_locals).
  std::uint32_t local_skips = 0;
  /// Local blocks a worker handles at a time (it holds the mailbox meanwhile).
  static constexpr int k_local_batch = 4;
  /// Runs the handler on at most k_local_batch local blocks, on this worker, unless another
  /// worker runs this mailbox's handlers now; true if it ran any.
  bool handle_locals();
  /// Its name (mailbox_spec::named), for errors, the watchdog and statistics; may be empty.
  std::string name;
};
static_assert(alignof(mailbox_base) <= alignof(std::max_align_t),
              "over-aligned, a mailbox makes every function holding a selector realign its frame");

class selector_core;

/// Whether t is the whole job (selectors over it are the job's).
[[nodiscard]] bool over_world(const team& t);
/// The lanes of the next mailbox over team t, which its members construct in the same order.
[[nodiscard]] team_lanes next_team_mailbox(const team& t);

/// Something in flight that the progress engine completes: a non-blocking collective, say.
class pending_op {
 public:
  virtual ~pending_op() = default;
  /// True once it has completed (then complete() runs, after it has left the list).
  virtual bool test() = 0;
  /// Fulfils what waits on it (a promise: its continuations run here).
  virtual void complete() = 0;
  /// What it is, for the watchdog's report.
  [[nodiscard]] virtual std::string describe() const = 0;
  /// The transport request it waits on, if that is all test() does: such requests are tested
  /// together (transport::test_all), in one pass of MPI's progress engine.
  [[nodiscard]] virtual transport::request* transport_request() noexcept { return nullptr; }
};
/// Hands op to the progress engine, which tests it at every poll until it completes.
void add_pending(std::shared_ptr<pending_op> op);

/// What inline code (sends, handlers, selector_ref) reads of the per-PE scheduler; the rest of
/// it, the progress engine, is the runtime's own (src/runtime/engine.hpp).
struct scheduler : send_context {
  /// Selector id -> the typed selector that owns it, for the live selectors: what a selector_ref
  /// in a lambda message looks up on every send through it (the table, then its entry: two
  /// dependent loads; a per-PE struct holding `&sel`, or a closure taking `self`, avoids them).
  /// A job selector's id is its construction number (the same on every PE, growing for ever), a
  /// team selector's its first mailbox's (>= exchange::k_team_conveyor, agreed by the members).
  /// The table holds only the live ones, at a multiplicative hash of the id chosen so that they
  /// do not collide: its size follows the selectors alive together, not those ever constructed.
  struct owner_table {
    std::vector<void*> slots;        ///< 2^(64 - shift) entries; null: free
    std::vector<std::uint32_t> ids;  ///< the id of each used slot
    std::uint64_t mult = 0x9e3779b97f4a7c15ULL;
    unsigned shift = 58;
    std::size_t used = 0;
    [[nodiscard]] std::size_t slot(std::uint64_t id) const noexcept {
      return static_cast<std::size_t>((id * mult) >> shift);
    }
    /// Takes a slot for id, holding `holder` until the owner is known.
    void insert(std::uint32_t id, void* holder);
    void erase(std::uint32_t id) noexcept;
  };
  static owner_table owners;
  /// One poll of a send blocked on credits: progress(), and after k_blocked_flush times
  /// MAILROOM_IDLE_FLUSH polls in a row that found nothing, the idle flush. Rarely: the credits
  /// come back by their own, and flushing at every idle moment would scatter half-empty
  /// buffers. But they may not: the receiver may have disabled the mailbox until a reply comes
  /// that waits in one of this PE's partly filled buffers.
  static bool progress_blocked();
};

/// Times a send blocked on back-pressure into the conveyor's statistics.
class credit_wait {
 public:
  explicit credit_wait(conveyor_core& c) noexcept;
  ~credit_wait();
  credit_wait(const credit_wait&) = delete;
  credit_wait& operator=(const credit_wait&) = delete;

 private:
  conveyor_core& c_;
  double t0_;
};

/// The non-template part of a selector: done bookkeeping, termination of each component of the
/// dependency graph, wait().
class selector_core {
 public:
  /// Over `t` when not null (its members construct it; a copy of the team is kept).
  /// `site`: where the program constructed it (named by errors here and by the watchdog). (Six
  /// arguments at most, all in registers: a seventh on the stack made the function that
  /// constructs a selector keep a frame pointer, and histogram's send loop lost a register.)
  selector_core(std::vector<mailbox_base*> boxes, const graph& g, const char* kind,
                source_location site, const team* t = nullptr);
  ~selector_core();
  selector_core(const selector_core&) = delete;
  selector_core& operator=(const selector_core&) = delete;

  /// (`where`: the program's call, named by an error: see call_site.)
  void done(int m, source_location where = {});
  void wait(source_location where = {});
  /// The handlers of selector `upstream` send to this one: its components close only once
  /// upstream has terminated on this PE (selector::receives_from).
  void receives_from(std::uint64_t upstream, source_location where = {});
  [[nodiscard]] bool finished() const noexcept;
  /// Ready once finished() (set by step()).
  [[nodiscard]] future<void> finished_future();
  [[nodiscard]] bool mailbox_finished(int m) const noexcept;
  [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
  [[nodiscard]] int mailboxes() const noexcept { return static_cast<int>(boxes_.size()); }

  /// Processes arrivals (unless `arrivals` is false: handle_arrivals did) and advances
  /// termination; returns true if anything happened.
  bool step(bool arrivals = true);
  /// Handles up to `budget` arrivals of mailbox m (what had arrived when the poll began), unless
  /// it is paused or a pool worker runs its handlers; true if it handled any.
  bool handle_arrivals(std::size_t m, std::size_t budget);
  /// Sets mailbox m's priority (selector::priority).
  void set_priority(int m, int priority);
  /// Disables or enables mailbox m on this PE (selector::disable, enable).
  void set_enabled(int m, bool enabled);
  [[nodiscard]] bool enabled(int m) const;
  [[nodiscard]] mailbox_base& box(std::size_t m) const noexcept { return *boxes_[m]; }

  /// Explains why mailbox m does not take this send (the cold path of send()), and stops the job.
  [[noreturn]] void refuse_send(int m, int dest) const;
  /// Worker 0: pushes what pool workers staged for its mailboxes; true if it pushed any.
  bool drain_staged();
  /// One line per mailbox: entry or not, done, finished, items sent and handled, buffers waiting.
  [[nodiscard]] std::string describe() const;

  /// Names it (selector::name): errors, the watchdog and statistics say "selector 'name'".
  void set_name(std::string_view name);
  /// "mailbox m", and its name in quotes if it has one.
  [[nodiscard]] std::string box_label(std::size_t m) const;
  /// Records the typed selector that owns this core (for selector_ref).
  void set_owner(void* owner) { scheduler::owners.slots[scheduler::owners.slot(id_)] = owner; }
  /// Over a team: the number of its members (else of the job's PEs).
  [[nodiscard]] int pes() const noexcept { return pes_; }
  /// MAILROOM_STATS=1: one line per mailbox (messages, bytes, buffers and their mean fill,
  /// credit waits, the busiest link), printed by this PE.
  void print_stats() const;
  /// Ships the partly filled buffers of its mailboxes whose destination has a credit; false if
  /// one was left for want of a credit.
  bool flush_partial();
  /// Whether a buffer has arrived for one of its mailboxes and waits to be handled.
  [[nodiscard]] bool has_arrivals() const noexcept;

 private:
  struct cold;  // what the hot paths never touch (src/runtime/scheduler.cpp)
  bool closed(std::size_t c) const noexcept;
  /// Every entry of this selector done() on this PE.
  [[nodiscard]] bool entries_done() const noexcept;
  /// In a ring: steps its waves (its first member only); true if anything happened.
  bool step_ring();
  /// Component c has terminated on this PE: its mailboxes take no more sends; the promise of
  /// finished_future() and the statistics once every component has.
  void finish_component(std::size_t c);
  /// Forms (or joins) the ring that the edge upstream -> this closes; `path` holds the
  /// selectors on the cycle.
  void form_ring(const std::vector<selector_core*>& path);
  /// The first selector that feeds this one and has not terminated here (null: none).
  [[nodiscard]] const selector_core* feeder_running() const noexcept;
  bool staged_waiting(std::size_t c) const noexcept;
  bool holding_reduced(std::size_t c);
  bool paused(std::size_t m) const noexcept;
  bool step_component(std::size_t c);
  void handle(std::size_t m, std::size_t budget);

  std::vector<mailbox_base*> boxes_;
  std::unique_ptr<cold> s_;
  std::uint32_t id_;
  int pes_;
};

}  // namespace mailroom::detail
