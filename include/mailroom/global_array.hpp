// SPDX-License-Identifier: MIT
// The global view (mSMS): a distributed array read and written by global index from any PE as if
// it were local. Another PE's elements are fetched a page at a time into this PE's cache, writes
// go to the cached copy, and at the next synchronisation (mailroom::sync(), every barrier()) the
// elements written go back to their owners and the cached pages are dropped: release consistency.
#pragma once

#include "mailroom/config.hpp"
#include "mailroom/detail/thread.hpp"
#include "mailroom/distributed.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace mailroom {

/// A global_array's settings; what is unset comes from the environment (MAILROOM_GLOBAL_*).
struct global_view_options {
  std::size_t page_bytes = 0;      ///< 0: MAILROOM_GLOBAL_PAGE_BYTES (4 KiB)
  std::size_t cache_bytes = 0;     ///< 0: MAILROOM_GLOBAL_CACHE_BYTES (64 MiB)
  std::optional<cache_mode> mode;  ///< unset: MAILROOM_GLOBAL_CACHE (remote)
};

/// What a global_array's cache did on this PE (global_array::statistics; MAILROOM_STATS prints
/// it when the array ends). Accesses to the PE's own part are not counted.
struct global_view_statistics {
  std::int64_t hits = 0;              ///< accesses to another PE's element found here
  std::int64_t misses = 0;            ///< accesses that had to fetch a page first (or wait for one)
  std::int64_t pages_fetched = 0;     ///< pages read from other PEs (prefetched ones too)
  std::int64_t bytes_fetched = 0;     ///< their bytes
  std::int64_t pages_prefetched = 0;  ///< of pages_fetched, those a prefetch asked for
  std::int64_t evictions = 0;         ///< pages dropped to make room before a sync
  std::int64_t pages_written_back = 0;  ///< pages with written elements, sent to their owners
  std::int64_t runs_written_back = 0;   ///< contiguous runs of written elements sent
  std::int64_t bytes_written_back = 0;  ///< their bytes
  std::int64_t syncs = 0;               ///< synchronisations (sync(), barrier())
  std::int64_t direct = 0;              ///< accesses to other PEs made without the cache (mode off)

  /// hits / (hits + misses); 0 when there was no access through the cache.
  [[nodiscard]] double hit_rate() const noexcept {
    const std::int64_t n = hits + misses;
    return n > 0 ? static_cast<double>(hits) / static_cast<double>(n) : 0.0;
  }
  /// Every counter, to combine them field by field (all_reduce over PEs, say).
  static const std::array<std::int64_t global_view_statistics::*, 11> counters;
  /// Field by field (to sum several arrays' or PEs' counters).
  global_view_statistics& operator+=(const global_view_statistics& o) noexcept;
  /// Field by field: a phase is after -= before.
  global_view_statistics& operator-=(const global_view_statistics& o) noexcept;
};

namespace detail {
/// The page the inline accessors reach without a call: PE `owner`'s local indices [lo, lo + n)
/// at `base`; `dirty`, when not null, has a bit per element to set on a write (a cached page;
/// null: the owner's memory, mapped here, written in place).
struct page_memo {
  int owner = -1;
  std::size_t lo = 0, n = 0;
  std::byte* base = nullptr;
  std::uint64_t* dirty = nullptr;
};
/// A global_array's cache on this PE (src/pgas/global_view.cpp); it starts with its memos: the
/// last pages touched (a tree walk moves between a few pages; a sweep stays on one), checked in
/// turn by the inline accessors.
struct page_cache {
  static constexpr int k_memos = 4;
  page_memo memo[k_memos];
  std::int64_t hits = 0;  // (memo hits; the rest is counted out of line)
  /// The memo holding PE owner's local index l, or null.
  [[nodiscard]] const page_memo* find(int owner, std::size_t l) const noexcept {
    for (const page_memo& m : memo)
      if (m.owner == owner && l - m.lo < m.n) return &m;
    return nullptr;
  }
};
/// The calling pool worker's cache of the same array (made on its first use).
page_cache* page_cache_of_worker(page_cache* c);
/// Opens the cache of a global_array whose parts (room elements of elem_bytes per PE) lie at
/// `part` in the symmetric heap. Not collective.
page_cache* page_cache_open(std::byte* part, std::size_t room, std::size_t elem_bytes,
                            const global_view_options& options);
/// Writes back what is written, drops the pages, prints MAILROOM_STATS' line.
void page_cache_close(page_cache* c) noexcept;
/// Makes the page of PE owner's local index l resident (fetching it, writing back and dropping
/// the least recently used page if the cache is full) and returns a memo of it; null when the
/// cache is off (the caller goes one-sided).
const page_memo* page_cache_touch(page_cache* c, int owner, std::size_t l);
/// Copies n elements from (owner, l) on: through the cache, or one-sided in mode off.
void page_cache_read(page_cache* c, int owner, std::size_t l, void* out, std::size_t n);
void page_cache_write(page_cache* c, int owner, std::size_t l, const void* in, std::size_t n);
/// Starts fetching the pages of (owner, [l, l + n)) that are not resident.
future<void> page_cache_prefetch(page_cache* c, int owner, std::size_t l, std::size_t n);
global_view_statistics page_cache_statistics(const page_cache* c) noexcept;
}  // namespace detail

/// d.size() elements of T laid out over the PEs by d (as a distributed<T, D>), read and written
/// by global index from any PE through a cache of other PEs' pages. Consistency is release
/// consistency, as mSMS's:
/// - a PE reads its own writes at once; another PE's writes are seen after the next sync()
///   (or barrier()) that both have passed, and not necessarily before;
/// - at a sync each PE sends its owners the elements it wrote (each element written, not whole
///   pages: PEs that wrote different elements of one page all keep their values) and drops
///   every cached page, so that the next read fetches what the owners hold then;
/// - two PEs that write the same element between two syncs (or a PE that writes an element its
///   owner writes too) leave one of the values, unspecified which (an element wider than 8
///   bytes possibly a mix of both); a read of an element that
///   another PE writes in the same interval sees the old value or the new one.
/// Elements of this PE are read and written in place. Elements of PEs whose memory this PE
/// maps (its node) are too under MAILROOM_GLOBAL_CACHE=remote (the default), which is the same
/// consistency, only sooner. Construction is collective; the array is not copyable (it owns its
/// cache). Tasks on other workers (MAILROOM_WORKERS) may use it too, each worker through a cache
/// of its own, written back at the same syncs (no task may use the array during a sync).
template <class T, distribution D = block>
class global_array {
  static_assert(std::is_trivially_copyable_v<T>, "global_array<T>: T must be trivially copyable");

 public:
  /// An empty array (no storage, no cache), to be assigned later.
  global_array() = default;
  /// Collective: d.size() elements under d, zeroed.
  explicit global_array(const D& d, const global_view_options& options = {},
                        source_location loc = source_location::current())
      : a_(d, loc),
        cache_(detail::page_cache_open(reinterpret_cast<std::byte*>(a_.parts().data()),
                                       a_.parts().size(), sizeof(T), options)),
        me_(this_pe().rank()) {}
  /// Collective: n elements in blocks over num_pes() PEs (D = block), zeroed.
  explicit global_array(std::int64_t n, const global_view_options& options = {},
                        source_location loc = source_location::current())
    requires std::is_same_v<D, block>
      : global_array(block(n, loc), options, loc) {}
  global_array(const global_array&) = delete;
  global_array& operator=(const global_array&) = delete;
  /// Takes o's array and cache (o becomes empty).
  global_array(global_array&& o) noexcept
      : a_(o.a_), cache_(std::exchange(o.cache_, nullptr)), me_(o.me_) {}
  /// Writes back and drops this one's cache, then takes o's array and cache.
  global_array& operator=(global_array&& o) noexcept {
    if (this != &o) {
      detail::page_cache_close(cache_);
      a_ = o.a_;
      cache_ = std::exchange(o.cache_, nullptr);
      me_ = o.me_;
    }
    return *this;
  }
  /// (Collective: see mailroom::symmetric_free below.)
  template <class U, class E>
  friend void symmetric_free(global_array<U, E>& a);
  /// Writes back what this PE wrote that has not been yet (not collective: its storage stays
  /// until symmetric_free or the runtime's end, as a distributed array's).
  ~global_array() { detail::page_cache_close(cache_); }

  /// The number of elements.
  [[nodiscard]] std::int64_t size() const noexcept { return a_.size(); }
  /// The distribution.
  [[nodiscard]] const D& dist() const noexcept { return a_.dist(); }
  /// Where element g lives.
  [[nodiscard]] place place_of(std::int64_t g) const noexcept { return a_.place_of(g); }
  /// This PE's elements by local index (read and written in place).
  [[nodiscard]] std::span<T> local() const { return a_.local(); }
  /// The array without the cache: one-sided operations and atomics by global index.
  [[nodiscard]] const distributed<T, D>& uncached() const noexcept { return a_; }

  /// Element g (not checked against size()).
  [[nodiscard]] T get(std::int64_t g) const {
    const place p = a_.place_of(g);
    if (p.owner.rank() == me_) return a_.parts()[p.local];
    detail::page_cache* c = mine();
    const detail::page_memo* m = c->find(p.owner.rank(), p.local);
    if (MAILROOM_LIKELY(m != nullptr)) {
      ++c->hits;
    } else if (m = detail::page_cache_touch(c, p.owner.rank(), p.local); m == nullptr) {
      T v;
      detail::page_cache_read(c, p.owner.rank(), p.local, &v, 1);
      return v;
    }
    T v;
    std::memcpy(&v, m->base + (p.local - m->lo) * sizeof(T), sizeof(T));
    return v;
  }
  /// Sets element g to v (not checked against size()).
  void put(std::int64_t g, const T& v) const {
    const place p = a_.place_of(g);
    if (p.owner.rank() == me_) {
      a_.parts()[p.local] = v;
      return;
    }
    detail::page_cache* c = mine();
    const detail::page_memo* m = c->find(p.owner.rank(), p.local);
    if (MAILROOM_LIKELY(m != nullptr)) {
      ++c->hits;
    } else if (m = detail::page_cache_touch(c, p.owner.rank(), p.local); m == nullptr) {
      detail::page_cache_write(c, p.owner.rank(), p.local, &v, 1);
      return;
    }
    const std::size_t i = p.local - m->lo;
    std::memcpy(m->base + i * sizeof(T), &v, sizeof(T));
    if (m->dirty != nullptr) m->dirty[i / 64] |= std::uint64_t{1} << (i % 64);
  }

  /// Element g as an lvalue: reads convert it to T, writes assign to it.
  class reference {
   public:
    /// The element's value.
    operator T() const { return a_->get(g_); }  // NOLINT(google-explicit-constructor)
    /// Sets the element to v.
    reference& operator=(const T& v) {
      a_->put(g_, v);
      return *this;
    }
    /// Copies the element r refers to (a[i] = a[i] writes it back unchanged).
    reference& operator=(const reference& r) {  // NOLINT(bugprone-unhandled-self-assignment)
      return *this = static_cast<T>(r);
    }
    /// Another reference to the same element.
    reference(const reference&) = default;
    /// The element becomes element + v.
    template <class U>
    reference& operator+=(const U& v) {
      return *this = static_cast<T>(static_cast<T>(*this) + v);
    }
    /// The element becomes element - v.
    template <class U>
    reference& operator-=(const U& v) {
      return *this = static_cast<T>(static_cast<T>(*this) - v);
    }
    /// The element becomes element * v.
    template <class U>
    reference& operator*=(const U& v) {
      return *this = static_cast<T>(static_cast<T>(*this) * v);
    }

   private:
    friend class global_array;
    reference(const global_array* a, std::int64_t g) noexcept : a_(a), g_(g) {}
    const global_array* a_;
    std::int64_t g_;
  };
  /// Element g, to read (T x = a[g]) or write (a[g] = x, a[g] += x).
  [[nodiscard]] reference operator[](std::int64_t g) noexcept { return {this, g}; }
  /// Element g's value (through a const array: reads only).
  [[nodiscard]] T operator[](std::int64_t g) const { return get(g); }

  /// Elements [g, g + out.size()) into out (runs of one owner copied a page at a time).
  void read(std::int64_t g, std::span<T> out,
            source_location loc = source_location::current()) const {
    check_range("read", g, out.size(), loc);
    runs(g, out.size(), [&](place p, std::size_t k, std::size_t n) {
      if (p.owner.rank() == me_)
        std::memcpy(out.data() + k, &a_.parts()[p.local], n * sizeof(T));
      else
        detail::page_cache_read(mine(), p.owner.rank(), p.local, out.data() + k, n);
    });
  }
  /// Elements [g, g + in.size()) become in.
  void write(std::int64_t g, std::span<const T> in,
             source_location loc = source_location::current()) const {
    check_range("write", g, in.size(), loc);
    runs(g, in.size(), [&](place p, std::size_t k, std::size_t n) {
      if (p.owner.rank() == me_)
        std::memcpy(&a_.parts()[p.local], in.data() + k, n * sizeof(T));
      else
        detail::page_cache_write(mine(), p.owner.rank(), p.local, in.data() + k, n);
    });
  }
  /// Starts fetching the pages of elements [g, g + n) that are neither here nor cached (at most
  /// the cache's room less one page); ready once they are. Reads of them then hit. A sync drops
  /// them like any other page.
  [[nodiscard]] future<void> prefetch(std::int64_t g, std::size_t n,
                                      source_location loc = source_location::current()) const {
    check_range("prefetch", g, n, loc);
    std::vector<future<void>> parts;
    runs(g, n, [&](place p, std::size_t, std::size_t k) {
      if (p.owner.rank() != me_)
        parts.push_back(detail::page_cache_prefetch(mine(), p.owner.rank(), p.local, k));
    });
    if (parts.empty()) return make_ready_future();
    if (parts.size() == 1) return std::move(parts.front());
    return when_all(parts);
  }

  /// This PE's counters since the array was constructed (every worker's).
  [[nodiscard]] global_view_statistics statistics() const noexcept {
    return detail::page_cache_statistics(cache_);
  }

 private:
  // This thread's cache: worker 0's, or a pool worker's own.
  [[nodiscard]] detail::page_cache* mine() const {
    if (MAILROOM_LIKELY(detail::t_worker <= 0)) return cache_;
    return detail::page_cache_of_worker(cache_);
  }
  // A range outside the array stops the job at the caller's line.
  void check_range(const char* what, std::int64_t g, std::size_t n,
                   const source_location& loc) const {
    if (MAILROOM_UNLIKELY(g < 0 || g > a_.size() || n > static_cast<std::size_t>(a_.size() - g)))
      detail::fail(loc.file_name(), static_cast<int>(loc.line()),
                   fmt::format("global_array::{}: elements [{}, {}) outside [0, {})", what, g,
                               g + static_cast<std::int64_t>(n), a_.size()));
  }
  // Calls f(place, offset, count) for each run of [g, g + n) that lies contiguously on one PE.
  template <class F>
  void runs(std::int64_t g, std::size_t n, F&& f) const {
    std::size_t k = 0;
    while (k < n) {
      const place p = a_.place_of(g + static_cast<std::int64_t>(k));
      std::size_t len = 1;
      if constexpr (requires(const D& d) {
                      { d.contiguous(g) } -> std::convertible_to<std::int64_t>;
                    }) {
        len = std::min<std::size_t>(
            n - k,
            static_cast<std::size_t>(a_.dist().contiguous(g + static_cast<std::int64_t>(k))));
      } else {
        while (k + len < n) {
          const place q = a_.place_of(g + static_cast<std::int64_t>(k + len));
          if (q.owner != p.owner || q.local != p.local + len) break;
          ++len;
        }
      }
      f(p, k, len);
      k += len;
    }
  }

  distributed<T, D> a_;
  detail::page_cache* cache_ = nullptr;
  int me_ = 0;  // this PE's rank
};

/// Collective: a sync (what every PE wrote reaches its owner), then every PE's part is released,
/// as for a distributed array; `a` becomes empty.
template <class T, class D>
void symmetric_free(global_array<T, D>& a) {
  detail::page_cache_close(std::exchange(a.cache_, nullptr));
  barrier();
  symmetric_free(a.a_);
}

/// This PE's counters summed over every global_array it has had since the runtime started
/// (subtract two snapshots to measure a phase).
[[nodiscard]] global_view_statistics global_view_totals();

/// Collective: every PE's writes through global arrays reach their owners, every cached page is
/// dropped, and every PE waits for the others (a barrier(), which does the same).
void sync(source_location loc = source_location::current());

}  // namespace mailroom
