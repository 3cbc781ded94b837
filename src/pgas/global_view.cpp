// SPDX-License-Identifier: MIT
// The global view's page cache (mailroom/global_array.hpp): per global_array and PE, a fixed
// number of page slots with an LRU list and an open-addressing table from (owner, page) to slot,
// a bit per cached element written, and the write-back at every barrier.
#include "mailroom/global_array.hpp"

#include "mailroom/detail/scheduler.hpp"
#include "mailroom/detail/tasks.hpp"
#include "mailroom/symmetric.hpp"

#include "common/pe_local.hpp"
#include "pgas/one_sided.hpp"
#include "runtime/lifetime.hpp"
#include "transport/transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace mailroom {

const std::array<std::int64_t global_view_statistics::*, 11> global_view_statistics::counters = {
    &global_view_statistics::hits,
    &global_view_statistics::misses,
    &global_view_statistics::pages_fetched,
    &global_view_statistics::bytes_fetched,
    &global_view_statistics::pages_prefetched,
    &global_view_statistics::evictions,
    &global_view_statistics::pages_written_back,
    &global_view_statistics::runs_written_back,
    &global_view_statistics::bytes_written_back,
    &global_view_statistics::syncs,
    &global_view_statistics::direct};

global_view_statistics& global_view_statistics::operator+=(
    const global_view_statistics& o) noexcept {
  for (const auto f : counters) this->*f += o.*f;
  return *this;
}

global_view_statistics& global_view_statistics::operator-=(
    const global_view_statistics& o) noexcept {
  for (const auto f : counters) this->*f -= o.*f;
  return *this;
}

namespace detail {
namespace {

constexpr std::uint64_t k_no_key = ~std::uint64_t{0};

// Waits for a transfer without running handlers (a handler may touch a page): on the simulated
// machine the PE sleeps meanwhile; under MPI each test drives MPI's progress.
void finish(std::unique_ptr<transport::request>& req) {
  if (req == nullptr) return;
  // (Yielding after a while: with more PEs than cores, the PE that must answer may need this
  // core. 64 tests in a row: several microseconds.)
  if (!req->wait_idle("a global_array page"))
    for (int tests = 1; !req->test(); ++tests)
      if (tests % 64 == 0) std::this_thread::yield();
  req.reset();
}

struct slot {
  std::uint64_t key = k_no_key;       // owner * pages_per_part + page; k_no_key: free
  std::int32_t prev = -1, next = -1;  // the LRU list (head: the most recent), or the free list
  std::uint32_t generation = 0;       // counts the slot's reuses (prefetch_op's check)
  std::unique_ptr<transport::request> fetch;  // the page's get, while in flight
};

class cache final : public page_cache, public std::enable_shared_from_this<cache> {
 public:
  // thread: the worker whose cache it is (0: worker 0's, which holds the others).
  cache(std::byte* part, std::size_t room, std::size_t elem, const global_view_options& o,
        int thread = 0)
      : part_(part), room_(room), elem_(elem), options_(o), thread_(thread) {
    const config& cfg = current_config();
    // A cache per worker that uses the array (MAILROOM_WORKERS, and the main flow's slot beside
    // a progress thread), made on its first use there.
    if (thread == 0) workers_.resize(static_cast<std::size_t>(cfg.workers) + 1);
    const std::size_t page = o.page_bytes != 0 ? o.page_bytes : cfg.global_page_bytes;
    const std::size_t bytes = o.cache_bytes != 0 ? o.cache_bytes : cfg.global_cache_bytes;
    mode_ = o.mode ? *o.mode : static_cast<cache_mode>(cfg.global_cache);
    page_elems_ = std::max<std::size_t>(1, page / elem);
    page_bytes_ = page_elems_ * elem;
    pages_per_part_ = std::max<std::size_t>(1, (room + page_elems_ - 1) / page_elems_);
    words_ = (page_elems_ + 63) / 64;
    pes_ = transport::size();
    if (mode_ == cache_mode::off) return;
    const std::size_t n = std::max<std::size_t>(2, bytes / page_bytes_);
    MAILROOM_CHECK(n < (std::size_t{1} << 30),
                   "global_array: a cache of {} pages is too many (MAILROOM_GLOBAL_CACHE_BYTES "
                   "{}, pages of {} bytes)",
                   n, bytes, page_bytes_);
    capacity_ = n;
    slots_.reserve(std::min<std::size_t>(n, 1024));
    // Room for every page, but untouched until used (large blocks come from mmap, zero pages
    // from calloc): an array whose cache stays small costs what it uses.
    data_.reset(static_cast<std::byte*>(::operator new[](n* page_bytes_, std::align_val_t{64})));
    dirty_.reset(static_cast<std::uint64_t*>(std::calloc(n * words_, sizeof(std::uint64_t))));
    const unsigned bits = std::bit_width(2 * n - 1);
    table_.reset(static_cast<std::int32_t*>(std::calloc(std::size_t{1} << bits, 4)));
    MAILROOM_CHECK(dirty_ != nullptr && table_ != nullptr,
                   "global_array: no memory for a cache of {} pages", n);
    mask_ = (std::size_t{1} << bits) - 1;
    shift_ = 64 - bits;
  }
  ~cache() { drop_all(); }
  cache(const cache&) = delete;
  cache& operator=(const cache&) = delete;

  // ---- what the accessors call ------------------------------------------------------------------
  const page_memo* touch(int owner, std::size_t l) {
    check(owner, l, 1);
    if (mode_ == cache_mode::off) return nullptr;
    page_memo& m = memo[next_memo_++ % k_memos];
    if (mode_ == cache_mode::remote) {
      if (void* peer = symmetric_peer(owner, part_)) {
        m = {owner, 0, room_, static_cast<std::byte*>(peer), nullptr};
        ++hits;
        return &m;
      }
    }
    const std::int32_t s = resident(owner, l / page_elems_, true);
    m = memo_of(s);
    return &m;
  }

  // Copies n elements from (owner, l) on to buf (Write: from buf to them).
  template <bool Write>
  void transfer(int owner, std::size_t l,
                std::conditional_t<Write, const std::byte*, std::byte*> buf, std::size_t n) {
    check(owner, l, n);
    const bool mapped = symmetric_peer(owner, part_) != nullptr;
    if (mode_ == cache_mode::off || (mode_ == cache_mode::remote && mapped)) {
      // In place (the owner's memory is mapped here) or one-sided.
      if (mode_ == cache_mode::off)
        ++stats_.direct;
      else
        ++hits;
      std::byte* at = part_ + l * elem_;
      const std::size_t bytes = n * elem_;
      if (mapped) {
        std::byte* peer = static_cast<std::byte*>(symmetric_peer(owner, at));
        if constexpr (Write)
          std::memcpy(peer, buf, bytes);
        else
          std::memcpy(buf, peer, bytes);
      } else {
        on_runtime_thread([&] {
          if constexpr (Write)
            symmetric_put(owner, at, buf, bytes);
          else
            symmetric_get(owner, at, buf, bytes);
        });
      }
      return;
    }
    // A page at a time through the cache.
    while (n > 0) {
      const std::size_t page = l / page_elems_, i = l - page * page_elems_;
      const std::size_t k = std::min(n, page_elems_ - i);
      const std::int32_t s = resident(owner, page, true);
      std::byte* data = slot_data(s) + i * elem_;
      if constexpr (Write) {
        std::memcpy(data, buf, k * elem_);
        mark(s, i, k);
      } else {
        std::memcpy(buf, data, k * elem_);
      }
      buf += k * elem_;
      l += k;
      n -= k;
    }
  }

  // Starts the fetches of the pages of (owner, [l, l + n)) not resident, at most the room less
  // one page; the future is ready once they are here.
  future<void> prefetch(int owner, std::size_t l, std::size_t n);

  // Worker t's cache of the same array (t > 0), made on its first use.
  cache& of_worker(int t) {
    MAILROOM_CHECK(t > 0 && static_cast<std::size_t>(t) < workers_.size(),
                   "global_array: used on worker {} (of {})", t, workers_.size());
    auto& w = workers_[static_cast<std::size_t>(t)];
    if (w == nullptr) w = std::make_shared<cache>(part_, room_, elem_, options_, t);
    return *w;
  }

  // Every written element to its owner, then every page dropped (at a barrier, on worker 0,
  // while no task uses the array: the workers' caches too).
  void release() {
    for (std::int32_t s = head_; s >= 0; s = slots_[static_cast<std::size_t>(s)].next) {
      finish(slots_[static_cast<std::size_t>(s)].fetch);
      write_back(s);
    }
    ++stats_.syncs;
    for (const auto& w : workers_)
      if (w != nullptr) w->release();
  }
  void drop_all() {
    for (const auto& w : workers_)
      if (w != nullptr) w->drop_all();
    while (head_ >= 0) {
      const std::int32_t s = head_;
      finish(slots_[static_cast<std::size_t>(s)].fetch);
      unlink(s);
      erase(slots_[static_cast<std::size_t>(s)].key);
      free_slot(s);
    }
    for (page_memo& m : memo) m = page_memo{};
  }
  void complete_puts() {
    for (auto& r : puts_) finish(r);
    puts_.clear();
    for (const auto& w : workers_)
      if (w != nullptr) w->complete_puts();
  }

  [[nodiscard]] global_view_statistics statistics() const noexcept {
    global_view_statistics s = stats_;
    s.hits += hits;
    for (const auto& w : workers_)
      if (w != nullptr) s += w->statistics();
    return s;
  }
  [[nodiscard]] cache_mode mode() const noexcept { return mode_; }
  [[nodiscard]] std::size_t page_bytes() const noexcept { return page_bytes_; }
  [[nodiscard]] std::size_t slots() const noexcept { return capacity_; }
  // Is slot s's fetch still in flight (with the same generation)?
  bool fetching(std::int32_t s, std::uint32_t generation) {
    slot& sl = slots_[static_cast<std::size_t>(s)];
    if (sl.generation != generation || sl.fetch == nullptr) return false;
    if (!sl.fetch->test()) return true;
    sl.fetch.reset();
    return false;
  }

  int id = 0;

 private:
  void check(int owner, std::size_t l, std::size_t n) const {
    MAILROOM_ASSERT(std::max(t_worker, 0) == thread_);
    MAILROOM_CHECK(owner >= 0 && owner < pes_ && l <= room_ && n <= room_ - l,
                   "global_array: elements [{}, {}) of PE {} are outside its part of {} (of {} "
                   "PEs)",
                   l, l + n, owner, room_, pes_);
  }
  std::byte* slot_data(std::int32_t s) const noexcept {
    return data_.get() + static_cast<std::size_t>(s) * page_bytes_;
  }
  std::uint64_t* slot_dirty(std::int32_t s) noexcept {
    return dirty_.get() + static_cast<std::size_t>(s) * words_;
  }
  page_memo memo_of(std::int32_t s) noexcept {
    const std::uint64_t key = slots_[static_cast<std::size_t>(s)].key;
    const std::size_t page = key % pages_per_part_;
    const std::size_t lo = page * page_elems_;
    return {static_cast<int>(key / pages_per_part_), lo, std::min(page_elems_, room_ - lo),
            slot_data(s), slot_dirty(s)};
  }
  // The first element from e on whose bit is `set` (page_elems_ if none).
  [[nodiscard]] std::size_t next_bit(const std::uint64_t* d, std::size_t e,
                                     bool set) const noexcept {
    while (e < page_elems_) {
      const std::uint64_t word = set ? d[e / 64] : ~d[e / 64];
      const std::uint64_t bits = word >> (e % 64);
      if (bits != 0)
        return std::min(page_elems_, e + static_cast<std::size_t>(std::countr_zero(bits)));
      e = (e / 64 + 1) * 64;
    }
    return page_elems_;
  }
  void mark(std::int32_t s, std::size_t i, std::size_t k) noexcept {
    std::uint64_t* d = slot_dirty(s);
    for (std::size_t e = i; e < i + k; ++e) d[e / 64] |= std::uint64_t{1} << (e % 64);
  }

  // ---- the table: key -> slot, linear probing ---------------------------------------------------
  [[nodiscard]] std::size_t home(std::uint64_t key) const noexcept {
    return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ULL) >> shift_);
  }
  // (The table holds slot + 1; 0 is empty.)
  [[nodiscard]] std::int32_t find(std::uint64_t key) const noexcept {
    for (std::size_t h = home(key);; h = (h + 1) & mask_) {
      const std::int32_t s = table_[h] - 1;
      if (s < 0 || slots_[static_cast<std::size_t>(s)].key == key) return s;
    }
  }
  void insert(std::uint64_t key, std::int32_t s) noexcept {
    std::size_t h = home(key);
    while (table_[h] != 0) h = (h + 1) & mask_;
    table_[h] = s + 1;
  }
  // Removes key, shifting back the entries of its cluster that would no longer be found.
  void erase(std::uint64_t key) noexcept {
    std::size_t h = home(key);
    while (slots_[static_cast<std::size_t>(table_[h] - 1)].key != key) h = (h + 1) & mask_;
    for (std::size_t j = (h + 1) & mask_; table_[j] != 0; j = (j + 1) & mask_) {
      const std::size_t want = home(slots_[static_cast<std::size_t>(table_[j] - 1)].key);
      // Entry j may move to h if its home is not in (h, j] (cyclically).
      if (((j - want) & mask_) >= ((j - h) & mask_)) {
        table_[h] = table_[j];
        h = j;
      }
    }
    table_[h] = 0;
  }

  // ---- the LRU list -----------------------------------------------------------------------------
  void unlink(std::int32_t s) noexcept {
    slot& sl = slots_[static_cast<std::size_t>(s)];
    (sl.prev >= 0 ? slots_[static_cast<std::size_t>(sl.prev)].next : head_) = sl.next;
    (sl.next >= 0 ? slots_[static_cast<std::size_t>(sl.next)].prev : tail_) = sl.prev;
    sl.prev = sl.next = -1;
  }
  void push_front(std::int32_t s) noexcept {
    slot& sl = slots_[static_cast<std::size_t>(s)];
    sl.prev = -1;
    sl.next = head_;
    (head_ >= 0 ? slots_[static_cast<std::size_t>(head_)].prev : tail_) = s;
    head_ = s;
  }
  void free_slot(std::int32_t s) noexcept {
    slot& sl = slots_[static_cast<std::size_t>(s)];
    sl.key = k_no_key;
    sl.prev = -1;
    sl.next = free_;
    free_ = s;
    for (page_memo& m : memo)
      if (m.dirty == slot_dirty(s)) m = page_memo{};
  }

  // A slot for a new page: a free one, else the least recently used page's, written back.
  std::int32_t take_slot() {
    if (free_ < 0 && slots_.size() < capacity_) {
      slots_.emplace_back();
      ++slots_.back().generation;
      return static_cast<std::int32_t>(slots_.size() - 1);
    }
    if (free_ < 0) {
      const std::int32_t s = tail_;
      finish(slots_[static_cast<std::size_t>(s)].fetch);
      on_runtime_thread([&] {
        write_back(s);
        complete_own_puts();  // (the slot's data is the source of its puts)
      });
      unlink(s);
      erase(slots_[static_cast<std::size_t>(s)].key);
      free_slot(s);
      ++stats_.evictions;
    }
    const std::int32_t s = free_;
    free_ = slots_[static_cast<std::size_t>(s)].next;
    ++slots_[static_cast<std::size_t>(s)].generation;
    return s;
  }

  // The slot holding (owner, page), fetched first if need be; with `wait`, here by the return.
  std::int32_t resident(int owner, std::size_t page, bool wait, bool prefetched = false) {
    const std::uint64_t key = static_cast<std::uint64_t>(owner) * pages_per_part_ + page;
    std::int32_t s = find(key);
    if (s >= 0) {
      slot& sl = slots_[static_cast<std::size_t>(s)];
      if (sl.fetch != nullptr && wait) {
        ++stats_.misses;
        finish(sl.fetch);
      } else if (wait) {
        ++hits;
      }
      if (head_ != s) {
        unlink(s);
        push_front(s);
      }
      return s;
    }
    if (wait) ++stats_.misses;
    s = take_slot();
    slot& sl = slots_[static_cast<std::size_t>(s)];
    sl.key = key;
    insert(key, s);
    push_front(s);
    const std::size_t lo = page * page_elems_;
    const std::size_t bytes = std::min(page_elems_, room_ - lo) * elem_;
    const std::byte* from = part_ + lo * elem_;
    if (const void* peer = symmetric_peer(owner, from))
      std::memcpy(slot_data(s), peer, bytes);
    else if (thread_ == 0)
      sl.fetch = symmetric_start_get(owner, from, slot_data(s), bytes);
    else
      on_runtime_thread([&] { symmetric_get(owner, from, slot_data(s), bytes); });
    ++stats_.pages_fetched;
    stats_.bytes_fetched += static_cast<std::int64_t>(bytes);
    if (prefetched) ++stats_.pages_prefetched;
    if (wait) finish(sl.fetch);
    return s;
  }

  void complete_own_puts() {
    for (auto& r : puts_) finish(r);
    puts_.clear();
  }
  // Runs f where MPI may be called: here on worker 0; from a pool worker, by worker 0's progress
  // engine while this worker waits (its cache is its own, so worker 0 may use it meanwhile).
  template <class F>
  void on_runtime_thread(F&& f) {
    if (thread_ == 0) {
      f();
      return;
    }
    std::atomic<bool> done{false};
    complete_on_runtime_thread([&f, &done] {
      f();
      done.store(true, std::memory_order_release);
    });
    for (int spins = 0; !done.load(std::memory_order_acquire); ++spins)
      if (spins > 1000) std::this_thread::yield();
  }

  // Starts the puts of slot s's written elements (a run of set bits each) and clears its bits.
  void write_back(std::int32_t s) {
    std::uint64_t* d = slot_dirty(s);
    const std::uint64_t key = slots_[static_cast<std::size_t>(s)].key;
    const int owner = static_cast<int>(key / pages_per_part_);
    const std::size_t lo = (key % pages_per_part_) * page_elems_;
    bool any = false;
    for (std::size_t e = next_bit(d, 0, true); e < page_elems_;) {
      const std::size_t end = next_bit(d, e, false);  // the run [e, end)
      const std::size_t bytes = (end - e) * elem_;
      std::byte* to = part_ + (lo + e) * elem_;
      const std::byte* from = slot_data(s) + e * elem_;
      if (void* peer = symmetric_peer(owner, to))
        std::memcpy(peer, from, bytes);
      else
        puts_.push_back(symmetric_start_put(owner, to, from, bytes));
      ++stats_.runs_written_back;
      stats_.bytes_written_back += static_cast<std::int64_t>(bytes);
      any = true;
      e = next_bit(d, end, true);
    }
    if (any) {
      ++stats_.pages_written_back;
      std::fill_n(d, words_, 0);
    }
  }

  std::byte* part_;
  std::size_t room_, elem_;
  global_view_options options_;
  int thread_ = 0;
  unsigned next_memo_ = 0;                       // the memo the next touch replaces (round robin)
  std::vector<std::shared_ptr<cache>> workers_;  // (worker 0's cache: the others')
  std::size_t page_elems_ = 1, page_bytes_ = 0, pages_per_part_ = 1, words_ = 1;
  cache_mode mode_ = cache_mode::remote;
  int pes_ = 1;
  std::vector<slot> slots_;
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete[](p, std::align_val_t{64}); }
  };
  std::unique_ptr<std::byte[], aligned_delete> data_;
  struct free_delete {
    void operator()(void* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::uint64_t[], free_delete> dirty_;
  std::unique_ptr<std::int32_t[], free_delete> table_;
  std::size_t capacity_ = 0, mask_ = 0;  // pages the cache may hold; the table's size - 1
  unsigned shift_ = 63;
  std::int32_t head_ = -1, tail_ = -1, free_ = -1;
  std::vector<std::unique_ptr<transport::request>> puts_;
  global_view_statistics stats_;

  friend class prefetch_op;
};

// A prefetch's future: ready once none of its slots' fetches is in flight.
class prefetch_op final : public pending_op {
 public:
  prefetch_op(std::shared_ptr<cache> c, std::vector<std::pair<std::int32_t, std::uint32_t>> s)
      : c_(std::move(c)), slots_(std::move(s)) {}
  bool test() override {
    while (!slots_.empty()) {
      if (c_->fetching(slots_.back().first, slots_.back().second)) return false;
      slots_.pop_back();
    }
    return true;
  }
  void complete() override { p_.set_value(); }
  [[nodiscard]] std::string describe() const override {
    return fmt::format("a global_array prefetch ({} pages in flight)", slots_.size());
  }
  future<void> get_future() { return p_.get_future(); }

 private:
  std::shared_ptr<cache> c_;
  std::vector<std::pair<std::int32_t, std::uint32_t>> slots_;
  promise<void> p_;
};

future<void> cache::prefetch(int owner, std::size_t l, std::size_t n) {
  check(owner, l, n);
  if (n == 0 || mode_ == cache_mode::off ||
      (mode_ == cache_mode::remote && symmetric_peer(owner, part_) != nullptr))
    return make_ready_future();
  if (thread_ != 0) {
    // (A pool worker's future would be worker 0's to complete: its pages come now instead.)
    const std::size_t first = l / page_elems_, last = (l + n - 1) / page_elems_;
    for (std::size_t page = first; page <= last && page - first < capacity_ - 1; ++page)
      (void)resident(owner, page, false, true);
    return make_ready_future();
  }
  std::vector<std::pair<std::int32_t, std::uint32_t>> in_flight;
  const std::size_t first = l / page_elems_, last = (l + n - 1) / page_elems_;
  const std::size_t most = capacity_ - 1;
  for (std::size_t page = first; page <= last && page - first < most; ++page) {
    const std::uint64_t key = static_cast<std::uint64_t>(owner) * pages_per_part_ + page;
    if (find(key) >= 0) continue;
    const std::int32_t s = resident(owner, page, false, true);
    if (slots_[static_cast<std::size_t>(s)].fetch != nullptr)
      in_flight.emplace_back(s, slots_[static_cast<std::size_t>(s)].generation);
  }
  if (in_flight.empty()) return make_ready_future();
  auto op = std::make_shared<prefetch_op>(shared_from_this(), std::move(in_flight));
  future<void> f = op->get_future();
  add_pending(std::move(op));
  return f;
}

// ---- this PE's open caches, released at every barrier
// ---------------------------------------------
std::vector<std::shared_ptr<cache>> g_caches;
bool g_hooked = false;
int g_next_id = 0;
global_view_statistics g_closed;  // the counters of the caches closed so far
MAILROOM_PE_LOCAL(g_caches);
MAILROOM_PE_LOCAL(g_hooked);
MAILROOM_PE_LOCAL(g_next_id);
MAILROOM_PE_LOCAL(g_closed);

void release_all() {
  const runtime_turn turn("a barrier (the global view's write-back)");
  for (const auto& c : g_caches) c->release();
  for (const auto& c : g_caches) c->complete_puts();
  quiet();  // (the puts visible at their owners before the barrier)
  for (const auto& c : g_caches) c->drop_all();
}

void forget_all() noexcept {
  g_caches.clear();
  g_hooked = false;
  g_next_id = 0;
  g_closed = {};
}

cache& as_cache(page_cache* c) noexcept { return static_cast<cache&>(*c); }
const cache& as_cache(const page_cache* c) noexcept { return static_cast<const cache&>(*c); }

void print_statistics(const cache& c) {
  const global_view_statistics s = c.statistics();
  std::fputs(
      fmt::format("mailroom: rank {}: stats: global_array #{} ({}, pages of {} bytes, {} "
                  "of them): hits {}, misses {} (hit rate {:.1f}%), fetched {} pages ({} "
                  "bytes, {} prefetched), evicted {}, wrote back {} pages in {} runs ({} "
                  "bytes), {} syncs{}\n",
                  transport::rank(), c.id, cache_mode_name(static_cast<std::uint64_t>(c.mode())),
                  c.page_bytes(), c.slots(), s.hits, s.misses, 100.0 * s.hit_rate(),
                  s.pages_fetched, s.bytes_fetched, s.pages_prefetched, s.evictions,
                  s.pages_written_back, s.runs_written_back, s.bytes_written_back, s.syncs,
                  s.direct > 0 ? fmt::format(", {} accesses one-sided", s.direct) : std::string())
          .c_str(),
      stderr);
}
}  // namespace

page_cache* page_cache_open(std::byte* part, std::size_t room, std::size_t elem_bytes,
                            const global_view_options& options) {
  const runtime_turn turn("mailroom::global_array");
  auto c = std::make_shared<cache>(part, room, elem_bytes, options);
  if (!g_hooked) {
    at_barrier(&release_all);
    at_runtime_stop(&forget_all);
    g_hooked = true;
  }
  c->id = g_next_id++;
  g_caches.push_back(c);
  return c.get();
}

void page_cache_close(page_cache* pc) noexcept {
  if (pc == nullptr) return;
  const auto it =
      std::find_if(g_caches.begin(), g_caches.end(), [&](const auto& c) { return c.get() == pc; });
  if (it == g_caches.end()) return;  // (the runtime has ended: its memory is gone)
  cache& c = **it;
  try {
    const runtime_turn turn("mailroom::global_array's end");
    c.release();
    c.complete_puts();
    quiet();
    c.drop_all();
    if (current_config().stats > 0) print_statistics(c);
    g_closed += c.statistics();
  } catch (...) {
    // (a failing job stops in fail(); nothing to add)
  }
  g_caches.erase(it);
}

page_cache* page_cache_of_worker(page_cache* c) { return &as_cache(c).of_worker(t_worker); }

const page_memo* page_cache_touch(page_cache* c, int owner, std::size_t l) {
  return as_cache(c).touch(owner, l);
}

void page_cache_read(page_cache* c, int owner, std::size_t l, void* out, std::size_t n) {
  as_cache(c).transfer<false>(owner, l, static_cast<std::byte*>(out), n);
}

void page_cache_write(page_cache* c, int owner, std::size_t l, const void* in, std::size_t n) {
  as_cache(c).transfer<true>(owner, l, static_cast<const std::byte*>(in), n);
}

future<void> page_cache_prefetch(page_cache* c, int owner, std::size_t l, std::size_t n) {
  return as_cache(c).prefetch(owner, l, n);
}

global_view_statistics page_cache_statistics(const page_cache* c) noexcept {
  return as_cache(c).statistics();
}

}  // namespace detail

global_view_statistics global_view_totals() {
  global_view_statistics s = detail::g_closed;
  for (const auto& c : detail::g_caches) s += c->statistics();
  return s;
}

void sync(source_location loc) { barrier(loc); }

}  // namespace mailroom
