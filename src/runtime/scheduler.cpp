// SPDX-License-Identifier: MIT
// The progress engine and the termination of each selector's components.
#include "mailroom/team.hpp"
#include "runtime/engine.hpp"

#include "mailroom/detail/signature.hpp"
#include "mailroom/error.hpp"
#include "mailroom/future.hpp"

#include "aggregation/exchange.hpp"
#include "common/pe_local.hpp"
#include "common/trace.hpp"
#include "runtime/context.hpp"
#include "runtime/workers.hpp"
#include "termination/protocols.hpp"
#include "transport/transport.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

namespace mailroom::detail {

/// Selectors of the job that feed each other around a cycle (receives_from both ways, or around
/// a longer loop): they terminate together, by quiescence waves over all their mailboxes, as a
/// cycle inside one selector does. Shared by its members; made collectively by the
/// receives_from that closes the cycle.
struct feed_ring {
  feed_ring(std::vector<selector_core*> all, std::uint32_t signature)
      : members(std::move(all)), waves(nullptr, signature, transport::rank() == 0) {}
  /// Its waves' signature leaves the registry with it (rings are named by their members' ids,
  /// which grow for ever: kept, they would grow the registry with every ring).
  ~feed_ring() { forget_wave_signature(waves.signature()); }
  feed_ring(const feed_ring&) = delete;
  feed_ring& operator=(const feed_ring&) = delete;

  std::vector<selector_core*> members;  ///< the live ones on this PE, by id; the first steps it
  cycle_waves waves;
  std::vector<conveyor_core*> conveyors;  // of every member's mailboxes (they outlive the ring's
                                          // waves: a member leaves only once it finished)
  bool finished = false;
};

bool engine::staging_in_use = false;
int engine::prioritized = 0;
std::vector<selector_core*> engine::live;
scheduler::owner_table scheduler::owners;
std::uint32_t engine::next_selector_id = 0;
std::vector<std::vector<selector_core*>> engine::finish_scopes;
std::vector<std::shared_ptr<pending_op>> engine::pending;
bool engine::completing = false;

void send_context::check_running(std::string_view call, source_location where) {
  const call_site here(where);
  check_running(call);
}

void send_context::check_running(std::string_view call) {
  MAILROOM_CHECK(exchange::running(),
                 "{} called before mailroom::runtime exists (construct `mailroom::runtime "
                 "rt(argc, argv);` first)",
                 call);
}

double engine::last_activity = -1;  // when idling began; -1: not idle
std::uint64_t engine::idle_polls = 0;
const char* engine::waiting_in = nullptr;
MAILROOM_PE_LOCAL(scheduler::sending_from);
MAILROOM_PE_LOCAL(scheduler::current_source);
MAILROOM_PE_LOCAL(engine::live);
MAILROOM_PE_LOCAL(engine::prioritized);
MAILROOM_PE_LOCAL(scheduler::owners);
MAILROOM_PE_LOCAL(engine::next_selector_id);

void scheduler::owner_table::insert(std::uint32_t id, void* holder) {
  if (slots.empty()) {
    slots.assign(std::size_t{1} << (64 - shift), nullptr);
    ids.assign(slots.size(), 0);
  }
  // (A live entry sits at the slot of its id: a live selector with this id would be there.)
  MAILROOM_CHECK(slots[slot(id)] == nullptr || ids[slot(id)] != id,
                 "selector #{:#x} is constructed while one with the same number lives (a job "
                 "selector alive while {} others were constructed after it?)",
                 id, exchange::k_team_conveyor);
  if (slots[slot(id)] != nullptr) {
    // A collision: another multiplier (the same size while the table is at most a quarter
    // full), until every live id and this one have a slot of their own.
    std::vector<std::pair<std::uint32_t, void*>> all{{id, holder}};
    for (std::size_t i = 0; i < slots.size(); ++i)
      if (slots[i] != nullptr) all.emplace_back(ids[i], slots[i]);
    unsigned bits = 64 - shift;
    while ((std::size_t{1} << bits) < 4 * all.size()) ++bits;
    std::uint64_t seed = mult;
    for (int tries = 0;; ++tries) {
      if (tries == 8) {
        ++bits;
        tries = 0;
      }
      seed += 0x9e3779b97f4a7c15ULL;  // splitmix64: the next odd multiplier
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      mult = (z ^ (z >> 31)) | 1;
      shift = 64 - bits;
      slots.assign(std::size_t{1} << bits, nullptr);
      ids.assign(slots.size(), 0);
      bool clash = false;
      for (const auto& [i, o] : all) {
        const std::size_t k = slot(i);
        if (slots[k] != nullptr) {
          clash = true;
          break;
        }
        slots[k] = o;
        ids[k] = i;
      }
      if (!clash) break;
    }
  } else {
    slots[slot(id)] = holder;
    ids[slot(id)] = id;
  }
  ++used;
}

void scheduler::owner_table::erase(std::uint32_t id) noexcept {
  const std::size_t k = slot(id);
  MAILROOM_ASSERT(slots[k] != nullptr && ids[k] == id);
  slots[k] = nullptr;
  --used;
}
MAILROOM_PE_LOCAL(engine::finish_scopes);
MAILROOM_PE_LOCAL(engine::pending);
MAILROOM_PE_LOCAL(engine::completing);
MAILROOM_PE_LOCAL(engine::last_activity);
MAILROOM_PE_LOCAL(engine::idle_polls);
MAILROOM_PE_LOCAL(engine::waiting_in);

bool engine::progress() {
  bool any = exchange::get().progress();
  if (in_handler()) {
    if (any) transport::note_poll(true);
    return any;
  }
  if (staging_in_use)
    for (std::size_t i = 0; i < live.size(); ++i) any = live[i]->drain_staged() || any;
  // Index loop: a handler may construct nothing, but wait() of one selector steps all of them.
  if (MAILROOM_LIKELY(prioritized == 0)) {
    for (std::size_t i = 0; i < live.size(); ++i) any = live[i]->step() || any;
  } else {
    // Arrivals in descending priority, over every live selector (ties: construction order,
    // then mailbox order), each up to what it held when the poll began; then termination.
    struct waiting {
      int priority;
      selector_core* s;
      std::size_t m, budget;
    };
    thread_local std::vector<waiting> order;
    order.clear();
    for (selector_core* s : live)
      for (std::size_t m = 0; m < static_cast<std::size_t>(s->mailboxes()); ++m)
        if (const std::size_t n = s->box(m).conveyor.arrivals(); n > 0)
          order.push_back({s->box(m).priority, s, m, n});
    std::stable_sort(order.begin(), order.end(),
                     [](const waiting& a, const waiting& b) { return a.priority > b.priority; });
    for (const waiting& w : order) any = w.s->handle_arrivals(w.m, w.budget) || any;
    for (std::size_t i = 0; i < live.size(); ++i) any = live[i]->step(false) || any;
  }
  if (handler_tasks_queued()) any = run_handler_tasks() || any;
  if (staging_in_use) any = run_completions() || any;
  if (!pending.empty()) any = poll_pending() || any;
  if (any) {
    transport::note_poll(true);
    last_activity = -1;
    idle_polls = 0;
    exchange::get().idle_poll(false);
    return true;
  }
  ++idle_polls;
  if ((current_config().watchdog > 0 || current_config().warn_after > 0) && !t_progress_thread)
    watch_idle();
  exchange::get().idle_poll(true);
  return false;
}

bool engine::poll_pending() {
  // Which have completed: the transport's requests together (one MPI call for all), the others
  // one by one. Then complete those, in order; their continuations may start more operations
  // (appended to the list, tested at the next poll).
  thread_local std::vector<transport::request*> requests;
  thread_local std::vector<std::size_t> of;
  thread_local std::vector<char> done, request_done;
  const std::size_t n = pending.size();
  requests.clear();
  of.clear();
  done.assign(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (transport::request* r = pending[i]->transport_request()) {
      requests.push_back(r);
      of.push_back(i);
    } else {
      done[i] = pending[i]->test() ? 1 : 0;
    }
  }
  if (!requests.empty()) {
    transport::test_all(requests, request_done);
    for (std::size_t k = 0; k < requests.size(); ++k) done[of[k]] = request_done[k];
  }
  if (std::find(done.begin(), done.end(), 1) == done.end()) return false;
  std::vector<std::shared_ptr<pending_op>> completed;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (done[i] != 0)
      completed.push_back(std::move(pending[i]));
    else
      pending[kept++] = std::move(pending[i]);
  }
  pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(kept),
                pending.begin() + static_cast<std::ptrdiff_t>(n));
  // A continuation that throws would leave the others' futures never ready: the job stops.
  const bool outer = completing;
  completing = true;
  try {
    for (auto& op : completed) op->complete();
  } catch (const std::exception& e) {
    MAILROOM_FAIL("a continuation (then) threw an exception: {}. Continuations must not throw",
                  e.what());
  } catch (...) {
    MAILROOM_FAIL("a continuation (then) threw an exception. Continuations must not throw");
  }
  completing = outer;
  return true;
}

void engine::check_not_completing(const char* what) {
  MAILROOM_CHECK(t_worker <= 0 && t_in_task == 0,
                 "{} called from a task (on worker {}): collective calls come from the PE's "
                 "main flow on worker 0, in the same order on every PE, never from tasks",
                 what, t_worker);
  MAILROOM_CHECK(!completing,
                 "{} called from a continuation that the progress engine ran: that moment "
                 "differs from PE to PE, so collective calls would start in different orders; "
                 "wait for the future in user code, then call it",
                 what);
}

void wait_until(bool (*ready)(const void*), const void* state, const char* what) {
  if (ready(state)) return;
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "{} called from inside a handler on a future that is not ready: handlers must "
                 "never block (nor the tasks they spawn); use then() to run code once the value "
                 "is there",
                 what);
  scheduler::check_running(what);
  if (t_worker > 0) {
    help_until(ready, state, what);
    return;
  }
  // Worker 0 runs tasks too: the value may come from one.
  while (!ready(state))
    if (!engine::progress_waiting(what) && !ready(state) && run_one_task()) engine::note_activity();
}

bool engine::progress_waiting(const char* what) {
  if (MAILROOM_UNLIKELY(t_worker > 0)) check_runtime_thread(what);
  const char* outer = waiting_in;
  waiting_in = what;
  const bool any = progress();
  const std::uint64_t polls = current_config().idle_flush;
  if (!any && polls > 0 && idle_polls >= polls && !in_handler()) {
    idle_polls = 0;
    flush_idle();
  }
  waiting_in = outer;
  return any;
}

bool scheduler::progress_blocked() {
  const bool any = engine::progress();
  const std::uint64_t polls = current_config().idle_flush * engine::k_blocked_flush;
  if (!any && polls > 0 && engine::idle_polls >= polls) {
    engine::idle_polls = 0;
    engine::flush_idle();
  }
  return any;
}

void add_pending(std::shared_ptr<pending_op> op) { engine::pending.push_back(std::move(op)); }

void begin_finish_scope() {
  const runtime_turn turn;
  if (t_worker <= 0) engine::finish_scopes.emplace_back();
}

void end_finish_scope(bool wait) {
  const runtime_turn turn;
  if (t_worker > 0) return;
  if (wait) {
    // wait() may not remove scope entries (only destructors do), so iterate over a copy.
    const auto started = engine::finish_scopes.back();
    for (selector_core* s : started) s->wait();
  }
  engine::finish_scopes.pop_back();
}

void engine::flush_idle() {
  // Without a credit a buffer stays open and keeps filling: forced into the backlog it would
  // wait for the credit all the same, and a cycle of short messages would then close nearly
  // empty buffers at every idle moment (docs/design.md, termination of cycles).
  exchange& ex = exchange::get();
  const std::int64_t before = ex.items_shipped;
  for (selector_core* s : live) s->flush_partial();
  ex.items_idle_flushed += ex.items_shipped - before;
}

namespace {
double g_warned_for = -1;  // the start of the stall last warned of (MAILROOM_WARN_AFTER)
MAILROOM_PE_LOCAL(g_warned_for);

// MAILROOM_WARN_AFTER: one line early in a stall, naming the PEs that hold this PE's buffers
// unacknowledged (the usual cause: a PE in an MPI call of the program's, or computing, that takes
// nothing in), long before the watchdog's limit; then the wait goes on.
void warn_stalled(double stalled, const char* waiting_in) {
  std::vector<int> peers;
  for (const selector_core* s : engine::live)
    for (int m = 0; m < s->mailboxes(); ++m) {
      std::vector<int> to;
      (void)s->box(static_cast<std::size_t>(m)).conveyor.unacknowledged(&to, 8);
      for (const int p : to)
        if (std::find(peers.begin(), peers.end(), p) == peers.end()) peers.push_back(p);
    }
  std::sort(peers.begin(), peers.end());
  std::string who;
  for (std::size_t i = 0; i < peers.size() && i < 8; ++i) who += fmt::format(" {}", peers[i]);
  if (peers.size() > 8) who += " ...";
  const std::uint64_t limit = current_config().watchdog;
  std::fprintf(
      stderr,
      "mailroom: rank %d: warning: no progress for %.0f s in %s%s; is a PE blocked in an MPI "
      "call of its own without mr::quiesce() before it, or computing without calling into "
      "mailroom (mr::yield())? %s (MAILROOM_WARN_AFTER)\n",
      transport::rank(), stalled, waiting_in != nullptr ? waiting_in : "a send waiting for credits",
      who.empty() ? "" : fmt::format(", buffers unacknowledged by PEs{}", who).c_str(),
      limit > 0 ? fmt::format("The watchdog stops the job after {} s.", limit).c_str() : "");
  std::fflush(stderr);
}
}  // namespace

void engine::watch_idle() {
  const double now = transport::wtime();
  if (last_activity < 0) {
    last_activity = now;
    return;
  }
  const auto warn = static_cast<double>(current_config().warn_after);
  const auto limit = static_cast<double>(current_config().watchdog);
  if (warn > 0 && g_warned_for != last_activity && now - last_activity >= warn &&
      (limit == 0 || warn < limit)) {
    g_warned_for = last_activity;
    warn_stalled(now - last_activity, waiting_in);
  }
  if (limit == 0 || now - last_activity < limit) return;
  std::string report;
  for (const selector_core* s : live) report += s->describe();
  for (const auto& op : pending) report += "  in flight: " + op->describe() + "\n";
  if (report.empty()) report = "  (no live selector)\n";
  report += exchange::get().describe_early();
  std::fprintf(stderr,
               "mailroom: rank %d: watchdog: no progress for %.0f s (MAILROOM_WATCHDOG=%.0f) "
               "in %s; not terminated here:\n%s",
               transport::rank(), now - last_activity, limit,
               waiting_in != nullptr ? waiting_in : "a send waiting for credits", report.c_str());
  std::fflush(stderr);
  // Give the other stuck PEs time to print their side before the job goes down.
  const double grace = std::min(5.0, limit);
  while (transport::wtime() - now < grace) exchange::get().progress();
  MAILROOM_FAIL("watchdog: no progress for {:.0f} s; see the report above", now - last_activity);
}

credit_wait::credit_wait(conveyor_core& c) noexcept : c_(c), t0_(transport::wtime()) {}
credit_wait::~credit_wait() { c_.add_credit_wait(transport::wtime() - t0_); }

/// What the hot paths never touch of a selector: its dependency graph's plan and the state of
/// each component's termination, its feeders and ring, its names.
struct selector_core::cold {
  struct component_state {
    bool finished = false;
    std::unique_ptr<cycle_waves> waves;     // cyclic components only
    std::vector<conveyor_core*> conveyors;  // of its mailboxes (cyclic components only)
  };
  termination::plan plan_;
  std::vector<component_state> components_;
  std::vector<bool> user_done_;
  std::vector<std::uint64_t> feeders_;  // ids of the selectors that send to this one
  std::shared_ptr<feed_ring> ring_;     // selectors it feeds and is fed by (null: none)
  std::size_t finished_count_ = 0;
  bool over_team_ = false;
  std::string kind_;          ///< "selector" or "actor", and its name if it has one
  source_location site_{};    ///< where the program constructed it
  std::string waiting_name_;  // "wait() of selector #k", for the watchdog
  std::unique_ptr<promise<void>> finished_promise_;  // made by finished_future()
};

bool selector_core::finished() const noexcept {
  const runtime_turn turn;
  return s_->finished_count_ == s_->components_.size();
}

mailbox_base::mailbox_base(bool delta_records, std::uint32_t signature, std::size_t item_bytes,
                           const team_lanes* team)
    : conveyor(delta_records, signature, item_bytes, team), accepts(0) {
  self_source = transport::rank();
  self_from = team != nullptr ? team->rt->rank_of(self_source) : self_source;
  staged.set_owner(this);
  set_accepts(scheduler::k_from_handler);
}

void mailbox_base::set_accepts(std::uint8_t bits) noexcept {
  accepts.store(bits);
  const int pes = conveyor.destinations();
  for (const std::uint8_t from : {scheduler::k_from_user, scheduler::k_from_handler})
    send_limit[from] = (bits & from) != 0 ? pes : 0;
}

selector_core::selector_core(std::vector<mailbox_base*> boxes, const graph& g, const char* kind,
                             source_location site, const team* t)
    : boxes_(std::move(boxes)),
      s_(std::make_unique<cold>()),
      id_(t != nullptr ? boxes_.front()->conveyor.id() : engine::next_selector_id),
      pes_(t != nullptr ? t->size() : transport::size()) {
  {
    const call_site here(site);  // (a graph that does not fit stops the job here)
    s_->plan_ = termination::analyse(g, static_cast<int>(boxes_.size()));
  }
  s_->components_.resize(s_->plan_.components.size());
  s_->user_done_.assign(boxes_.size(), false);
  s_->over_team_ = t != nullptr;
  s_->kind_ = kind;
  s_->site_ = site;
  s_->waiting_name_ = s_->over_team_
                          ? fmt::format("wait() of {} {:#x} over a team of {}", kind, id_, pes_)
                          : fmt::format("wait() of {} #{}", kind, id_);
  const call_site here(s_->site_);
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "a {} was constructed inside a handler: construction is collective, so every "
                 "PE must construct its selectors in the same order from user code",
                 kind);
  engine::check_not_completing("a selector's constructor");
  // A cycle's quiescence waves run among the members (over a team: its group's).
  // (Their contexts pair by creation order: each wave checks that the members' are this one.)
  for (std::size_t c = 0; c < s_->components_.size(); ++c)
    if (s_->plan_.components[c].cyclic) {
      const std::uint32_t of = boxes_.front()->conveyor.signature();
      s_->components_[c].waves = std::make_unique<cycle_waves>(
          s_->over_team_ ? &group_of(*t) : nullptr,
          wave_signature(
              of ^ static_cast<std::uint32_t>(c),
              fmt::format("the cycle through mailbox {} of {}",
                          s_->plan_.components[c].members.front(), describe_signature(of))),
          boxes_.front()->self_from == 0);
      for (int m : s_->plan_.components[c].members)
        s_->components_[c].conveyors.push_back(&boxes_[static_cast<std::size_t>(m)]->conveyor);
    }
  for (std::size_t m = 0; m < boxes_.size(); ++m)
    if (s_->plan_.entry[m])
      boxes_[m]->set_accepts(boxes_[m]->accepts.load() | scheduler::k_from_user);
  if (!s_->over_team_) engine::next_selector_id = (id_ + 1) % exchange::k_team_conveyor;
  scheduler::owners.insert(id_, this);  // (held until set_owner)
  engine::live.push_back(this);
  if (!engine::finish_scopes.empty()) engine::finish_scopes.back().push_back(this);
}

selector_core::~selector_core() {
  if (!finished()) {
    // Leaving scope ends this PE's stream to every entry and waits for termination.
    for (std::size_t m = 0; m < boxes_.size(); ++m)
      if (s_->plan_.entry[m] && !s_->user_done_[m]) done(static_cast<int>(m));
    wait();
  }
  if (s_->ring_) std::erase(s_->ring_->members, this);  // (terminated with the others)
  scheduler::owners.erase(id_);
  for (const mailbox_base* b : boxes_) engine::prioritized -= b->priority != 0;
  std::erase(engine::live, this);
  for (auto& scope : engine::finish_scopes) std::erase(scope, this);
}

void selector_core::set_name(std::string_view name) {
  // (From user code only: a wait in progress holds its name, s_->waiting_name_, by pointer.)
  const runtime_turn turn("name()");
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "name() called from inside a handler: name a {} from "
                 "user code, outside its waits",
                 s_->kind_);
  const std::string base = s_->kind_.substr(0, s_->kind_.find(' '));
  s_->kind_ = name.empty() ? base : fmt::format("{} '{}'", base, name);
  s_->waiting_name_ =
      s_->over_team_ ? fmt::format("wait() of {} {:#x} over a team of {}", s_->kind_, id_, pes_)
                     : fmt::format("wait() of {} #{}", s_->kind_, id_);
}

std::string selector_core::box_label(std::size_t m) const {
  const std::string& name = boxes_[m]->name;
  return name.empty() ? fmt::format("mailbox {}", m) : fmt::format("mailbox {} '{}'", m, name);
}

void selector_core::done(int m, source_location where) {
  const call_site here(where);
  const runtime_turn turn("done()");
  MAILROOM_CHECK(m >= 0 && m < mailboxes(), "done({}): mailbox id out of range [0, {}) of this {}",
                 m, mailboxes(), s_->kind_);
  const auto mi = static_cast<std::size_t>(m);
  MAILROOM_CHECK(s_->plan_.entry[mi],
                 "done({}): {} is fed only by handlers, and the runtime closes it; call "
                 "done() on the entry mailboxes (or declare it an entry in the graph)",
                 m, box_label(mi));
  MAILROOM_CHECK(!s_->user_done_[mi], "done({}) called twice on this {}", m, s_->kind_);
  s_->user_done_[mi] = true;
  boxes_[mi]->set_accepts(
      static_cast<std::uint8_t>(boxes_[mi]->accepts.load() & ~scheduler::k_from_user));
}

std::string selector_core::describe() const {
  std::string out;
  // Up to k_listed PEs, then "..." if there are more (the lists are collected one longer).
  constexpr std::size_t k_listed = 8;
  const auto pes = [](const std::vector<int>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size() && i < k_listed; ++i)
      s += fmt::format("{}{}", i == 0 ? "" : " ", v[i]);
    return v.size() > k_listed ? s + " ..." : s;
  };
  if (s_->ring_ && !finished()) {
    std::string ids, open;
    for (const selector_core* r : s_->ring_->members) {
      ids += fmt::format(" #{}", r->id_);
      if (!r->entries_done()) open += fmt::format(" #{}", r->id_);
    }
    out += fmt::format(
        "  {} #{}: feeds and is fed by{} (receives_from around a cycle): they "
        "terminate together{}\n",
        s_->kind_, id_, ids,
        open.empty() ? "" : fmt::format("; done() NOT called on all entries of{}", open));
  }
  if (const selector_core* up = feeder_running(); up != nullptr && !finished())
    out += fmt::format("  {} #{}: closes after {} #{} has terminated here (receives_from)\n",
                       s_->kind_, id_, up->s_->kind_, up->id_);
  if (!finished() && s_->site_.line() > 0)
    out += fmt::format("  {} #{}, constructed at {}:{}:\n", s_->kind_, id_, s_->site_.file_name(),
                       s_->site_.line());
  for (std::size_t m = 0; m < boxes_.size(); ++m) {
    const auto& conv = boxes_[m]->conveyor;
    const bool fin = mailbox_finished(static_cast<int>(m));
    if (fin) continue;
    std::string state;
    switch (conv.stream_state()) {
      case conveyor_core::stream::open:
        break;
      case conveyor_core::stream::flushing: {
        // With node or grid routing a PE ends its lanes stage by stage: say which holds it.
        std::vector<int> from;
        state = ", ending: its last buffers not yet shipped";
        for (std::uint32_t c = k_transit; forwarded_class(c); ++c) {
          const int open = conv.open_links(1u << c, &from, k_listed + 1);
          if (open > 0) {
            state = fmt::format(
                ", ending: forwards at stage {} from {}, {} of whose links to it have not ended: "
                "{}",
                stage_of(c) + 1, network_link(c) ? "other nodes" : "the PEs of its node", open,
                pes(from));
            break;
          }
          if (c == k_transit && conv.forward_backlog() > 0) {
            state = fmt::format(
                ", ending: {} buffers still to forward for other PEs (waiting for credits)",
                conv.forward_backlog());
            break;
          }
        }
        break;
      }
      case conveyor_core::stream::draining: {
        std::vector<int> from;
        if (const int open = conv.open_links(1u << k_final | 1u << k_delivery, &from, k_listed + 1);
            open > 0)
          state = fmt::format(", ending: {} PEs have not ended their stream to it: {}", open,
                              pes(from));
        else
          state = fmt::format(", ending: {} of the {} items announced have arrived",
                              conv.received_items(), conv.announced_items());
        break;
      }
      case conveyor_core::stream::ended:
        state = ", ended";
        break;
    }
    std::vector<int> filling, unacked;
    const std::int64_t items = conv.filling_items(&filling, k_listed + 1);
    const std::int64_t buffers = conv.unacknowledged(&unacked, k_listed + 1);
    out += fmt::format(
        "  {} #{} {} ({}): {}{}, {}, sent {} items, handled {}, {} buffers waiting "
        "here{}{}{}{}\n",
        s_->kind_, id_, box_label(m), describe_signature(conv.signature()),
        boxes_[m]->disabled.load(std::memory_order_relaxed)
            ? "DISABLED on this PE (its arrivals wait, and it cannot terminate, until "
              "enable()), "
            : "",
        s_->plan_.entry[m] ? "entry" : "fed by handlers",
        s_->plan_.entry[m] ? (s_->user_done_[m] ? "done() called" : "done() NOT called")
                           : "closed by runtime",
        conv.sent_items(), conv.processed_items(), conv.arrivals(),
        items > 0
            ? fmt::format(", {} items in partly filled buffers (to PEs {})", items, pes(filling))
            : "",
        buffers > 0 ? fmt::format(", {} buffers unacknowledged by PEs {}", buffers, pes(unacked))
                    : "",
        conv.backlogged() ? fmt::format(", {} buffers waiting for credits", conv.backlog_size())
                          : "",
        state);
  }
  return out;
}

bool selector_core::flush_partial() {
  bool all = true;
  for (mailbox_base* box : boxes_) {
    if (box->holds_reduced()) all = box->flush_reduced() && all;  // (message reductions)
    all = box->conveyor.flush(false) && all;
  }
  return all;
}

bool selector_core::has_arrivals() const noexcept {
  return std::any_of(boxes_.begin(), boxes_.end(),
                     [](const mailbox_base* b) { return b->conveyor.has_arrivals(); });
}

void selector_core::print_stats() const {
  std::string out;
  for (std::size_t m = 0; m < boxes_.size(); ++m) {
    const auto& conv = boxes_[m]->conveyor;
    std::int64_t bytes = 0, buffers = 0, busiest = 0;
    int busiest_pe = -1;
    int links = 0;
    for (std::size_t l = 0; l < conv.items_to().size(); ++l) {
      bytes += conv.bytes_to()[l];
      buffers += conv.buffers_to()[l];
      if (conv.items_to()[l] > 0) ++links;
      if (conv.items_to()[l] > busiest) {
        busiest = conv.items_to()[l];
        busiest_pe = conv.route_table().peer[l];
      }
    }
    const double fill = conv.room_sent() > 0 ? 100.0 * static_cast<double>(bytes) /
                                                   static_cast<double>(conv.room_sent())
                                             : 0.0;
    out += fmt::format(
        "mailroom: rank {}: stats: {} #{} {}: sent {} messages ({} bytes) in {} buffers "
        "(mean fill {:.1f}%) over {} links, busiest to PE {} ({} messages); handled {}; senders "
        "waited {:.6f} s for credits{}\n",
        transport::rank(), s_->kind_, id_, box_label(m), conv.sent_items(), bytes, buffers, fill,
        links, busiest_pe, busiest, conv.processed_items() - conv.hop_combined_items(),
        conv.credit_wait_seconds(),
        conv.combined_items > 0
            ? fmt::format("; {} more combined into those before they left", conv.combined_items)
            : std::string());
    // Message reductions at hops: per hop of the routes through this PE, what came to be
    // passed on and what was folded here.
    if (conv.hop_combined_items() > 0) {
      out += fmt::format("mailroom: rank {}: stats: {} #{} {}: at hops here (in / combined):",
                         transport::rank(), s_->kind_, id_, box_label(m));
      for (std::uint32_t c = k_transit; forwarded_class(c); ++c)
        if (conv.hop_received_items(c) > 0)
          out +=
              fmt::format(" {} {} {} / {}", network_link(c) ? "network" : "transit",
                          stage_of(c) + 1, conv.hop_received_items(c), conv.hop_combined_items(c));
      out += '\n';
    }
  }
  std::fputs(out.c_str(), stderr);
}

bool selector_core::mailbox_finished(int m) const noexcept {
  return s_
      ->components_[static_cast<std::size_t>(s_->plan_.component_of[static_cast<std::size_t>(m)])]
      .finished;
}

namespace {
[[noreturn]] void handler_threw(const mailbox_base& box, int source, const char* what) {
  MAILROOM_FAIL(
      "a handler of mailbox {} threw an exception on worker {}, handling a message from "
      "PE {}: {}. Handlers must not throw: a message would be lost",
      describe_signature(box.conveyor.signature()), t_worker, source, what);
}
}  // namespace

bool mailbox_base::handle_locals() {
  if (!staged.local_waiting() || disabled.load(std::memory_order_relaxed)) return false;
  const bool serial = !concurrent_handlers;
  if (serial && handling.exchange(true, std::memory_order_acquire)) return false;
  // Termination waits while it runs: counted before a block leaves the queue (see step()).
  hold_handler_work(1);
  bool any = false;
  const auto run_blocks = [&] {
    for (int most = k_local_batch; most > 0; --most) {
      stage_block* b = staged.take_local();
      if (b == nullptr) break;
      run_local(*b);
      staging::release_local(b);
      any = true;
    }
  };
  try {
    if (t_worker == 0) {
      const handler_scope in_handler;
      run_blocks();
    } else {
      {
        const worker_task_scope in_handler_task(true);
        run_blocks();
      }
      publish_staged();  // what the handlers sent, before the count drops
    }
  } catch (const std::exception& e) {
    handler_threw(*this, self_source, e.what());
  } catch (...) {
    handler_threw(*this, self_source, "(not a std::exception)");
  }
  if (serial) handling.store(false, std::memory_order_release);
  hold_handler_work(-1);
  return any;
}

namespace {
// Polls of worker 0 that leave local blocks to a pool worker looking for work.
constexpr std::uint32_t k_local_skips = 64;
}  // namespace

bool selector_core::drain_staged() {
  bool any = false;
  for (std::size_t m = 0; m < boxes_.size(); ++m) {
    mailbox_base* box = boxes_[m];
    while (box->staged.waiting()) {
      std::uint32_t* at = nullptr;
      stage_block* b = box->staged.to_drain(at);
      if (b == nullptr) break;
      MAILROOM_CHECK(!box->conveyor.closed(),
                     "a task sent to {} #{} mailbox {} after it was done() or closed on this PE "
                     "(call done() after the finish that waits for the tasks that send to it)",
                     s_->kind_, id_, m);
      const std::uint32_t before = *at;
      const bool all = box->drain(*b, *at);
      any = any || *at != before;
      if (!all) break;
      box->staged.drained();
    }
  }
  return any;
}

void selector_core::refuse_send(int m, int dest) const {
  const auto mi = static_cast<std::size_t>(m);
  MAILROOM_CHECK(dest >= 0 && dest < pes_, "send to {}: {} {} is out of range [0, {})",
                 box_label(mi), s_->over_team_ ? "team rank" : "PE", dest, pes_);
  if ((boxes_[mi]->accepts.load() & scheduler::k_from_handler) == 0)
    MAILROOM_FAIL(
        "send to {} after it was closed on this PE: a handler sends to it "
        "but the dependency graph has no edge saying so (a handler of the same {}: an "
        "edge in its graph; of another selector: declare it with receives_from)",
        box_label(mi), s_->kind_);
  if (s_->user_done_[mi]) MAILROOM_FAIL("send to {} after done({}) on this PE", box_label(mi), m);
  MAILROOM_FAIL(
      "send to {} from outside the {}'s handlers, but it is not an entry "
      "mailbox (declare it in graph::entries, or send from a handler)",
      box_label(mi), s_->kind_);
}

// Memory stays bounded because a mailbox whose handlers feed a mailbox that has run out of
// credits stops taking work until credits return; its senders, unacknowledged, then run out of
// credits in turn. Sinks are never paused, so in an acyclic graph the pauses always clear (by
// induction from the sinks up). Mailboxes in a cycle are never paused: pausing them could
// deadlock (two PEs waiting for each other's acknowledgements), so they may spill past their
// credits by what the cycle generates while a destination is slow.
bool selector_core::paused(std::size_t m) const noexcept {
  const mailbox_base& box = *boxes_[m];
  if (box.disabled.load(std::memory_order_relaxed)) return true;  // (by the user: see enable)
  // A concurrent mailbox takes in at most two buffers per worker ahead of their handlers.
  if (box.concurrent_handlers && box.in_hands.load(std::memory_order_relaxed) >= 2 * workers())
    return true;
  if (s_->plan_.components[static_cast<std::size_t>(s_->plan_.component_of[m])].cyclic)
    return false;
  for (int s : s_->plan_.successors[m])
    if (boxes_[static_cast<std::size_t>(s)]->conveyor.backlogged()) return true;
  return false;
}

bool selector_core::holding_reduced(std::size_t c) {
  // Messages held back by a reducing mailbox's cache are in no count the termination protocols
  // read: they leave first, once the component has nothing left to handle (before, its handlers
  // may still send more that combine with them).
  const auto& members = s_->plan_.components[c].members;
  const auto box = [this](int m) { return boxes_[static_cast<std::size_t>(m)]; };
  if (std::none_of(members.begin(), members.end(), [&](int m) { return box(m)->holds_reduced(); }))
    return false;
  if (std::any_of(members.begin(), members.end(),
                  [&](int m) { return box(m)->conveyor.has_arrivals(); }))
    return true;
  bool all = true;
  for (int m : members) all = box(m)->flush_reduced() && all;
  return !all;
}

bool selector_core::staged_waiting(std::size_t c) const noexcept {
  for (int m : s_->plan_.components[c].members)
    if (boxes_[static_cast<std::size_t>(m)]->staged.waiting()) return true;
  return false;
}

namespace {
// The live selector with this id (null: destroyed here).
const selector_core* live_selector(std::uint64_t id) noexcept {
  for (const selector_core* s : engine::live)
    if (s->id() == id) return s;
  return nullptr;
}
}  // namespace

const selector_core* selector_core::feeder_running() const noexcept {
  // (A feeder destroyed here has terminated here: its destructor waits for that.)
  for (const std::uint64_t id : s_->feeders_)
    if (const selector_core* s = live_selector(id);
        s != nullptr && !s->finished() && (s_->ring_ == nullptr || s->s_->ring_ != s_->ring_))
      return s;
  return nullptr;
}

void selector_core::receives_from(std::uint64_t upstream, source_location where) {
  const call_site here(where);
  const runtime_turn turn("receives_from()");
  const selector_core* up = live_selector(upstream);
  MAILROOM_CHECK(up != nullptr, "{} #{}: receives_from a selector that no longer lives", s_->kind_,
                 id_);
  MAILROOM_CHECK(up != this,
                 "{} #{}: receives_from itself; a selector's handlers sending to its own "
                 "mailboxes need edges in its graph instead",
                 s_->kind_, id_);
  MAILROOM_CHECK(
      s_->finished_count_ == 0 &&
          std::none_of(s_->user_done_.begin(), s_->user_done_.end(), [](bool d) { return d; }),
      "{} #{}: receives_from called after done() (or after it terminated); declare "
      "it first, on every PE",
      s_->kind_, id_);
  // Does the edge close a cycle (this feeds upstream, through the selectors it feeds)? The
  // selectors on it are those that feed upstream (transitively) and are fed by this one.
  const auto feeding = [](const selector_core* to) {  // to and all that feed it, transitively
    std::vector<const selector_core*> all{to};
    for (std::size_t i = 0; i < all.size(); ++i)
      for (const std::uint64_t id : all[i]->s_->feeders_)
        if (const selector_core* s = live_selector(id);
            s != nullptr && std::find(all.begin(), all.end(), s) == all.end())
          all.push_back(s);
    return all;
  };
  const std::vector<const selector_core*> into_up = feeding(up);
  if (std::find(into_up.begin(), into_up.end(), this) != into_up.end() &&
      (s_->ring_ == nullptr || up->s_->ring_ != s_->ring_)) {
    std::vector<selector_core*> path;
    for (const selector_core* s : into_up) {
      const std::vector<const selector_core*> into_s = feeding(s);
      if (std::find(into_s.begin(), into_s.end(), this) != into_s.end())
        path.push_back(const_cast<selector_core*>(s));  // (the live selectors are ours)
    }
    form_ring(path);
  }
  if (std::find(s_->feeders_.begin(), s_->feeders_.end(), upstream) == s_->feeders_.end())
    s_->feeders_.push_back(upstream);
}

void selector_core::form_ring(const std::vector<selector_core*>& path) {
  // With the rings its members are already in: they all terminate together now.
  std::vector<selector_core*> members;
  const auto add = [&](selector_core* s) {
    if (std::find(members.begin(), members.end(), s) == members.end()) members.push_back(s);
  };
  add(this);
  for (selector_core* s : path) {
    add(s);
    if (s->s_->ring_)
      for (selector_core* t : s->s_->ring_->members) add(t);
  }
  if (s_->ring_)
    for (selector_core* t : s_->ring_->members) add(t);
  for (const selector_core* s : members) {
    MAILROOM_CHECK(!s->s_->over_team_,
                   "{} #{} and {} #{} feed each other (receives_from around a cycle), and one is "
                   "over a team: such cycles are supported between selectors of the job only; put "
                   "the mailboxes of the cycle in one selector",
                   s_->kind_, id_, s->s_->kind_, s->id_);
    MAILROOM_CHECK(
        s->s_->finished_count_ == 0 &&
            std::none_of(s->s_->user_done_.begin(), s->s_->user_done_.end(),
                         [](bool d) { return d; }),
        "{} #{} receives_from closes a cycle through {} #{}, on which done() was already "
        "called (or which terminated): declare the edges of a cycle before any done()",
        s_->kind_, id_, s->s_->kind_, s->id_);
  }
  // The waves run on a communicator of their own: collective, like constructing a selector, so
  // every PE declares the edges that close cycles in the same order among its constructions.
  engine::check_not_completing("receives_from() closing a cycle of selectors");
  std::sort(members.begin(), members.end(),
            [](const selector_core* a, const selector_core* b) { return a->id_ < b->id_; });
  // (Its waves check that every PE's are of the same ring: the same selectors, by id.)
  std::uint32_t key = 0;
  std::string ids;
  for (const selector_core* s : members) {
    key = key * 0x9e3779b1u + s->id_ + 1;
    ids += fmt::format("{}#{}", ids.empty() ? "" : ", ", s->id_);
  }
  const source_location& at = call_site::current() != nullptr ? *call_site::current() : s_->site_;
  auto ring = std::make_shared<feed_ring>(
      members,
      wave_signature(key, fmt::format("the cycle of selectors {} closed by receives_from at {}:{}",
                                      ids, at.file_name(), at.line())));
  for (selector_core* s : members) {
    s->s_->ring_ = ring;
    for (mailbox_base* b : s->boxes_) ring->conveyors.push_back(&b->conveyor);
  }
}

bool selector_core::closed(std::size_t c) const noexcept {
  if (!s_->feeders_.empty() && feeder_running() != nullptr) return false;
  const auto& comp = s_->plan_.components[c];
  for (int m : comp.members) {
    const auto mi = static_cast<std::size_t>(m);
    if (s_->plan_.entry[mi] && !s_->user_done_[mi]) return false;
    // A disabled mailbox does not close here: what still arrives would wait for enable().
    if (boxes_[mi]->disabled.load(std::memory_order_relaxed)) return false;
  }
  for (int p : comp.predecessors)
    if (!s_->components_[static_cast<std::size_t>(p)].finished) return false;
  return true;
}

bool selector_core::step_component(std::size_t c) {
  auto& st = s_->components_[c];
  const auto& comp = s_->plan_.components[c];
  if (!comp.cyclic) {
    mailbox_base& box = *boxes_[static_cast<std::size_t>(comp.members.front())];
    if (!box.conveyor.closed()) box.set_accepts(0);
    return step_stream(box.conveyor);
  }
  // A cycle: sampled only when nothing of the component is waiting here, after shipping every
  // partly filled buffer (see quiescence for why that makes the count exact). (Once it has
  // terminated, finish_component closes its mailboxes to sends.)
  return st.waves->step(st.conveyors, true);
}

// A handler that throws leaves its buffer half handled: the messages after it would be lost and
// the counts that termination relies on could never agree, so the job stops, naming the
// handler, rather than letting the exception unwind through the runtime.
void selector_core::handle(std::size_t m, std::size_t budget) {
  mailbox_base* box = boxes_[m];
  const bool traced = trace::g_on;
  const double t0 = traced ? trace::now() : 0.0;
  const std::int64_t before = box->conveyor.processed_items();
  try {
    const handler_scope in_handler;
    for (; budget > 0 && !paused(m); --budget) box->process_front();
  } catch (const std::exception& e) {
    MAILROOM_FAIL(
        "a handler of {} #{} {} ({}) threw an exception, handling a message "
        "from PE {}: {}. Handlers must not throw: a message would be lost",
        s_->kind_, id_, box_label(m), describe_signature(box->conveyor.signature()),
        box->conveyor.front().source, e.what());
  } catch (...) {
    MAILROOM_FAIL(
        "a handler of {} #{} {} ({}) threw an exception (not a "
        "std::exception), handling a message from PE {}. Handlers must not throw: a "
        "message would be lost",
        s_->kind_, id_, box_label(m), describe_signature(box->conveyor.signature()),
        box->conveyor.front().source);
  }
  if (MAILROOM_UNLIKELY(traced)) {
    const std::uint32_t k = trace::kind_for((std::uint64_t{id_} << 20) | m, [&] {
      return trace::kind(fmt::format("handle: {} #{} {}", s_->kind_, id_, box_label(m)), "handlers",
                         {"messages", "selector", "mailbox", nullptr});
    });
    trace::record(k, t0, trace::now() - t0,
                  {box->conveyor.processed_items() - before, id_, static_cast<std::int64_t>(m), 0});
  }
}

bool selector_core::handle_arrivals(std::size_t m, std::size_t budget) {
  mailbox_base& box = *boxes_[m];
  if (budget == 0 || paused(m)) return false;
  // With pool workers, one of them may be running this mailbox's handlers (on its blocks to
  // this PE): then the arrivals wait for the next poll.
  const bool serial = engine::staging_in_use && !box.concurrent_handlers;
  if (serial && box.handling.exchange(true, std::memory_order_acquire)) return false;
  handle(m, serial ? std::min<std::size_t>(budget, 2) : budget);
  if (serial) box.handling.store(false, std::memory_order_release);
  return true;
}

void selector_core::set_priority(int m, int priority) {
  const runtime_turn turn;
  MAILROOM_CHECK(m >= 0 && m < mailboxes(),
                 "priority({}): mailbox id out of range [0, {}) of "
                 "this {}",
                 m, mailboxes(), s_->kind_);
  int& p = boxes_[static_cast<std::size_t>(m)]->priority;
  engine::prioritized += (priority != 0) - (p != 0);
  p = priority;
}

void selector_core::set_enabled(int m, bool enabled) {
  const runtime_turn turn(enabled ? "enable()" : "disable()");
  MAILROOM_CHECK(m >= 0 && m < mailboxes(), "{}({}): mailbox id out of range [0, {}) of this {}",
                 enabled ? "enable" : "disable", m, mailboxes(), s_->kind_);
  MAILROOM_CHECK(enabled || !mailbox_finished(m),
                 "disable({}) on {} #{} after that mailbox terminated on this PE: it has nothing "
                 "left to hold back",
                 m, s_->kind_, id_);
  boxes_[static_cast<std::size_t>(m)]->disabled.store(!enabled, std::memory_order_relaxed);
}

bool selector_core::enabled(int m) const {
  const runtime_turn turn;
  MAILROOM_CHECK(m >= 0 && m < mailboxes(),
                 "enabled({}): mailbox id out of range [0, {}) of "
                 "this {}",
                 m, mailboxes(), s_->kind_);
  return !boxes_[static_cast<std::size_t>(m)]->disabled.load(std::memory_order_relaxed);
}

bool selector_core::step(bool arrivals) {
  bool any = false;
  for (std::size_t m = 0; m < boxes_.size(); ++m) {
    // Handle what had arrived when the step began (not what handlers send to this PE meanwhile,
    // so a self-sending mailbox cannot starve MPI progress), unless the mailbox is paused.
    mailbox_base& box = *boxes_[m];
    if (arrivals) any = handle_arrivals(m, box.conveyor.arrivals()) || any;
    // The pool workers' blocks to this PE: left to them while one of them looks for work (it
    // handles its own, in its cache), but not for long (another's may be waiting).
    if (engine::staging_in_use && box.staged.local_waiting() && !paused(m)) {
      if (pool_looking() && ++box.local_skips < k_local_skips) continue;
      box.local_skips = 0;
      any = box.handle_locals() || any;
    }
  }
  if (s_->ring_) return step_ring() || any;
  // Nothing terminates while a worker's sends wait here or a handler's task may still send. (In
  // that order: a worker that takes a block away counts in handler_work first.)
  for (std::size_t c = 0; c < s_->components_.size(); ++c) {
    if (s_->components_[c].finished || !closed(c)) continue;
    if (staged_waiting(c) || handler_work() > 0 || holding_reduced(c)) continue;
    if (step_component(c)) {
      finish_component(c);
      any = true;
    }
  }
  return any;
}

void selector_core::finish_component(std::size_t c) {
  s_->components_[c].finished = true;
  ++s_->finished_count_;
  for (int m : s_->plan_.components[c].members) boxes_[static_cast<std::size_t>(m)]->set_accepts(0);
  if (MAILROOM_UNLIKELY(trace::g_on))
    trace::record(trace::builtin().terminated, trace::now(), -1,
                  {id_, static_cast<std::int64_t>(c), 0, 0});
  if (finished() && current_config().stats > 0) print_stats();
  if (finished() && s_->finished_promise_ != nullptr) {
    const bool outer = engine::completing;  // (its continuations run from progress)
    engine::completing = true;
    s_->finished_promise_->set_value();
    engine::completing = outer;
  }
}

bool selector_core::entries_done() const noexcept {
  for (std::size_t m = 0; m < boxes_.size(); ++m)
    if (s_->plan_.entry[m] && !s_->user_done_[m]) return false;
  return true;
}

// A ring terminates as a cycle inside one selector does (step_component), over the mailboxes of
// all its members: closed here once every member's entries are done and every selector outside
// the ring that feeds one of them has terminated here; then quiescence waves over the members'
// counts, sampled when none of their mailboxes has anything waiting here.
bool selector_core::step_ring() {
  feed_ring& r = *s_->ring_;
  if (r.finished || r.members.front() != this) return false;
  for (const selector_core* s : r.members) {
    if (!s->entries_done() || s->feeder_running() != nullptr) return false;
    for (const mailbox_base* b : s->boxes_)
      if (b->disabled.load(std::memory_order_relaxed)) return false;  // (as closed())
  }
  bool ready = handler_work() == 0;
  for (const selector_core* s : r.members)
    for (std::size_t c = 0; c < s->s_->components_.size(); ++c)
      if (s->staged_waiting(c)) ready = false;
  if (!r.waves.step(r.conveyors, ready)) return false;
  r.finished = true;
  for (selector_core* s : r.members)
    for (std::size_t c = 0; c < s->s_->components_.size(); ++c)
      if (!s->s_->components_[c].finished) s->finish_component(c);
  return true;
}

future<void> selector_core::finished_future() {
  const runtime_turn turn;
  if (finished()) return make_ready_future();
  if (s_->finished_promise_ == nullptr) s_->finished_promise_ = std::make_unique<promise<void>>();
  return s_->finished_promise_->get_future();
}

void selector_core::wait(source_location where) {
  const runtime_turn turn;
  const call_site here(where);
  MAILROOM_CHECK(!scheduler::in_handler(),
                 "wait() called from inside a handler: handlers must "
                 "never block");
  for (std::size_t m = 0; m < boxes_.size(); ++m)
    MAILROOM_CHECK(!s_->plan_.entry[m] || s_->user_done_[m],
                   "wait() on a {} whose entry mailbox {} was never done() on this PE: it "
                   "would never terminate",
                   s_->kind_, m);
  // The same for the selectors that feed it (receives_from), and theirs: it terminates after
  // them.
  std::vector<const selector_core*> feeding{this}, seen{this};  // (rings: cycles)
  while (!feeding.empty()) {
    const selector_core* f = feeding.back();
    feeding.pop_back();
    for (const std::uint64_t id : f->s_->feeders_) {
      const selector_core* s = live_selector(id);
      if (s == nullptr || std::find(seen.begin(), seen.end(), s) != seen.end()) continue;
      seen.push_back(s);
      for (std::size_t m = 0; m < s->boxes_.size(); ++m)
        MAILROOM_CHECK(!s->s_->plan_.entry[m] || s->s_->user_done_[m] || s->finished(),
                       "wait() on {} #{}, which receives from {} #{}, whose entry mailbox {} was "
                       "never done() on this PE: it would never terminate (call done() on the "
                       "selectors that feed it first)",
                       s_->kind_, id_, s->s_->kind_, s->id_, m);
      feeding.push_back(s);
    }
  }
  // Also hand every queued buffer to MPI before returning: the caller may block in MPI next
  // (a barrier), and buffers still in our backlog would never reach their PEs.
  while (!finished() || !exchange::get().drained())
    engine::progress_waiting(s_->waiting_name_.c_str());
}

}  // namespace mailroom::detail
