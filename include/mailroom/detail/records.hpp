// SPDX-License-Identifier: MIT
// How records are laid out in an aggregation buffer, as the inline send paths write them: a
// lane's cursor (records counted per run, not per push), runs of delta-coded records (a run's
// header and constant words once, then each record's varying words), bound senders' runs,
// variable-size items, and the copies they are made with. conveyor_core (detail/conveyor_core.hpp)
// owns the buffers, credits and routing; this is the part of its send path that only writes bytes.
// Not API.
#pragma once

#include "mailroom/error.hpp"

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <utility>

namespace mailroom::detail {

/// The record layout of conveyor_core's buffers: constants, lanes, and the static functions
/// that write records into a lane (conveyor_core derives from it).
struct record_codec {
  /// The length word of a variable-size item: its payload's bytes, and k_var_piece when the
  /// payload is a piece of a message larger than a buffer (the mailbox reassembles it).
  static constexpr std::uint32_t k_var_piece = 0x8000'0000U, k_var_len = 0x7fff'ffffU;
  /// Bytes of a variable-size item of `len` payload bytes on the wire: [u32 len][u32 0][payload,
  /// zero-padded to 8] (the payload starts 8-aligned where the item does).
  static constexpr std::size_t var_item_bytes(std::uint32_t len) noexcept {
    return 8 + ((static_cast<std::size_t>(len & k_var_len) + 7) & ~std::size_t{7});
  }
  /// Largest record, in 8-byte words, that push_delta codes (larger ones go whole).
  static constexpr std::size_t k_delta_words = 16;
  /// Header of a run of push_delta records: [tag][count][vary][0], 4 bytes each.
  static constexpr std::size_t k_delta_run_header = 16;
  /// A constant word that changes after a run of at least this many records stays constant
  /// (the next run carries its new value); after a shorter run it joins the varying words. So a
  /// rarely changing capture costs at most a run header per this many records, and padding
  /// bytes or captures that change often cost a word per record, as in a typed message.
  static constexpr std::uint32_t k_settled_run = 64;
  /// Records of at most this many words get a sending path per set of varying words; larger
  /// ones one per number of varying words.
  static constexpr std::size_t k_unrolled_delta_words = 5;
  /// Bytes a delta lane's `end` stops short of its buffer's end: the most one push_delta or
  /// push_bound writes (a new run's header and a record of k_delta_words words), so that the
  /// fast path's one test is pos < end whatever the record.
  static constexpr std::size_t k_end_margin = k_delta_run_header + 8 * k_delta_words;
  /// Alignment of a push_delta/push_whole tag: its address's low bits hold a run's set of
  /// varying words (records of up to k_unrolled_delta_words words).
  static constexpr std::size_t k_tag_align = std::size_t{1} << k_unrolled_delta_words;
  /// The bit every bound sender's key has (push_bound, next_bound_key).
  static constexpr std::uintptr_t k_bound_key = std::uintptr_t{1} << 63;

  /// Calls fn(w0, ..., w{W-1}) with the record's words as scalars: how the slow paths get a
  /// small record, so that one the compiler keeps in registers need not be stored anywhere on
  /// the fast path. Not as an array, built from them or passed whole: the compiler may build
  /// it from the registers in vector registers, and does so before the branch to the slow path.
  template <std::size_t W, class F>
  static decltype(auto) with_words(const void* words, F&& fn) noexcept {
    return [&]<std::size_t... K>(std::index_sequence<K...>) -> decltype(auto) {
      return fn(word_at(words, K)...);
    }(std::make_index_sequence<W>{});
  }
  /// A larger record's words by value (these records live in memory anyway).
  template <std::size_t W>
  using record_words = std::array<std::uint64_t, W>;
  template <std::size_t W>
  [[nodiscard]] static record_words<W> words_of(const void* words) noexcept {
    record_words<W> c{};
    if constexpr (W > 0) std::memcpy(c.data(), words, 8 * W);
    return c;
  }
  /// A push_bound record made for its slow paths: the key, the Wc constant words, then the Wl
  /// varying ones (given as scalars, or at an address).
  template <std::size_t Wc, std::size_t Wl>
  struct bound_record {
    std::uintptr_t key;
    record_words<Wc + Wl> words;
    template <class... V>
      requires(sizeof...(V) == Wl)
    bound_record(std::uintptr_t k, const void* constant, V... varying) noexcept : key(k), words{} {
      if constexpr (Wc > 0) std::memcpy(words.data(), constant, 8 * Wc);
      std::size_t at = Wc;
      ((words[at++] = static_cast<std::uint64_t>(varying)), ...);
    }
    bound_record(std::uintptr_t k, const void* constant, const void* varying) noexcept
        : key(k), words{} {
      if constexpr (Wc > 0) std::memcpy(words.data(), constant, 8 * Wc);
      std::memcpy(words.data() + Wc, varying, 8 * Wl);
    }
  };

  /// A typed conveyor's lane as a send sees it: where the next item goes, and where the last
  /// item that fits would start, plus 1, so that an item fits where pos < end: a push is one
  /// compare, a copy and an addition. (Variable-size items, of no fixed size: `end` is the end
  /// of the room, and a payload of n bytes fits where n <= end - pos.) Both null while the lane
  /// has no buffer: nothing fits, so the first push takes the slow path, which gets a buffer.
  /// Items are not counted per push: the buffer's bytes tell how many when it ships.
  struct cursor {
    std::byte* pos = nullptr;
    std::byte* end = nullptr;
  };
  // The rest of a destination's run state: read when a run opens or closes, by the slow
  // paths, and by the sends of larger records.
  struct alignas(64) run_state {
    std::uint64_t base[k_delta_words] = {};  ///< the open run's first record (larger records)
    std::uintptr_t last = 0;                 ///< the address of the last run's tag
    /// The buffer, less the lane's offset (a slot lane's buffer starts that far into the
    /// conveyor's capacity): the bytes used are pos - buf, within `capacity`. Null: none.
    std::byte* buf = nullptr;
    std::uint32_t capacity = 0;  ///< the conveyor's capacity, from buf
    std::uint32_t items = 0;     ///< records of the buffer's closed runs
    std::uint32_t count_at = 0;  ///< offset of the open run's count in the buffer; 0: no run
    /// The open run's records: (bytes from run_from) / stride, where each record writes
    /// `stride` bytes; those that write none (all constant) or have no fixed size (whole and
    /// routed records) are counted one by one in run_items, with stride 0.
    std::uint32_t run_from = 0, stride = 0, run_items = 0;
    std::uint32_t vary = 0;                ///< words each record of the run carries
    std::uint32_t varying = 0;             ///< how many (the bits set in `vary`)
    std::uint8_t pos[k_delta_words] = {};  ///< positions: the varying words, then the constant
  };
  // A destination of a delta-record conveyor, as a send of a record of up to
  // k_unrolled_delta_words words sees it, in its first cache line: where the next record goes,
  // where the fast path stops (k_end_margin short of the end: both null without a buffer, and
  // for always_full_lane_), the open run's key and the run's first record. A push adds its
  // bytes to `pos`, nothing more: records are counted when their run closes.
  struct alignas(64) lane {
    std::byte* pos = nullptr;
    std::byte* end = nullptr;
    /// The open run's key: its tag's address, plus its set of varying words for records of up
    /// to k_unrolled_delta_words words (below k_tag_align); 0: no run open.
    std::uintptr_t open = 0;
    std::uint64_t base[k_unrolled_delta_words] = {};  ///< the open run's first record
    // The second to fourth cache lines: the rest of the run state (a lane of 256 bytes, so that
    // a lane index is one shift).
    alignas(64) run_state rs;
  };
  static_assert(offsetof(lane, rs) == 64 && sizeof(lane) == 256);
  // The bytes the lane's buffer holds (from rs.buf, so with the lane's offset).
  static std::uint32_t used(const lane& ln) noexcept {
    return static_cast<std::uint32_t>(ln.pos - ln.rs.buf);
  }
  // Whether `need` more bytes fit in the lane's buffer: the exact test of the slow paths (the
  // fast path's pos < end leaves k_end_margin unused).
  static bool fits(const lane& ln, std::size_t need) noexcept {
    return ln.rs.buf != nullptr && used(ln) + need <= ln.rs.capacity;
  }
  // Gives the lane a buffer (`buf` less the lane's offset) whose records start at `from`.
  static void attach(lane& ln, std::byte* buf, std::uint32_t from,
                     std::uint32_t capacity) noexcept {
    run_state& rs = ln.rs;
    rs.buf = buf;
    rs.capacity = capacity;
    rs.items = 0;
    rs.count_at = 0;
    rs.run_items = 0;
    ln.pos = buf + from;
    ln.end = buf + (capacity - k_end_margin);
    ln.open = 0;
  }
  // Takes the lane's buffer away (shipped, its runs closed): nothing fits and nothing is
  // counted until the next attach.
  static void detach(lane& ln) noexcept {
    MAILROOM_ASSERT(ln.rs.count_at == 0);
    ln.rs.buf = nullptr;
    ln.rs.items = 0;
    ln.pos = nullptr;
    ln.end = nullptr;
  }
  // The records of the lane's open run (none if no run is open).
  static std::uint32_t open_records(const lane& ln) noexcept {
    const run_state& rs = ln.rs;
    if (rs.count_at == 0) return 0;
    return rs.run_items + (rs.stride == 0 ? 0 : (used(ln) - rs.run_from) / rs.stride);
  }
  // The records in the lane's buffer.
  static std::uint32_t records(const lane& ln) noexcept { return ln.rs.items + open_records(ln); }
  // Where the open run's first record is kept for records of W words.
  template <std::size_t W>
  static std::uint64_t* base_of(lane& ln) noexcept {
    if constexpr (W <= k_unrolled_delta_words)
      return ln.base;
    else
      return ln.rs.base;
  }
  // Writes the open run's count, once per run, not per record, and adds it to the buffer's.
  static void close_run(lane& ln) noexcept {
    run_state& rs = ln.rs;
    if (rs.count_at == 0) return;
    const std::uint32_t count = open_records(ln);
    std::memcpy(rs.buf + rs.count_at, &count, 4);
    rs.items += count;
    rs.count_at = 0;
    ln.open = 0;
  }
  // Notes the run whose header starts at offset `at`, its records from the cursor on, of
  // `stride` bytes each (0: counted one by one).
  static void begin_run(lane& ln, std::uint32_t at, std::uint32_t stride) noexcept {
    run_state& rs = ln.rs;
    rs.count_at = at + 4;
    rs.run_from = used(ln);
    rs.stride = stride;
    rs.run_items = 0;
  }
  // Starts a run [tag][count] of whole records at the cursor under `key`, closing the one
  // before.
  static void open_run(lane& ln, std::uint32_t tag, std::uintptr_t key) noexcept {
    close_run(ln);
    const std::uint32_t at = used(ln);
    std::memcpy(ln.pos, &tag, 4);
    ln.pos += 8;
    ln.open = key;
    ln.rs.last = key;
    begin_run(ln, at, 0);
  }
  static void open_run(lane& ln, const std::uint32_t& tag) noexcept {
    open_run(ln, tag, key_of(tag));
  }
  static std::uintptr_t key_of(const std::uint32_t& tag) noexcept {
    return reinterpret_cast<std::uintptr_t>(&tag);
  }
  static const std::byte* word_ptr(const void* words, std::size_t k) noexcept {
    return static_cast<const std::byte*>(words) + 8 * k;
  }
  static std::uint64_t word_at(const void* words, std::size_t k) noexcept {
    std::uint64_t w;
    std::memcpy(&w, word_ptr(words, k), 8);
    return w;
  }
  // Stores one word of a record with a scalar store. The barrier keeps the compiler's
  // basic-block vectorizer from pairing a record's words into one vector store, which it builds
  // from registers at a cost of several instructions per record. The store is of a uint64_t
  // object, not of bytes: it cannot alias the conveyor's counts or the sender's 8-bit context,
  // which the compiler then need not reload after it (words are 8-byte aligned in a run).
  static void put_word(std::byte* out, std::uint64_t w) noexcept {
#if defined(__GNUC__)
    asm("" : "+r"(w));
#endif
    ::new (static_cast<void*>(out)) std::uint64_t(w);
  }
  // Copies an item of N bytes into a buffer as a send does. An item of more than two words is
  // copied word by word (put_word): the caller builds it with 8-byte stores (a struct of two
  // indices and a value, made in the send's argument), and its words are then kept in registers
  // or forwarded from those stores, where memcpy's 16-byte loads cannot take their data from two
  // 8-byte stores and stall every send (store forwarding; transpose's send loop spent two thirds
  // of its time on that load). Two words the compiler builds in a vector register (as it passes
  // them to the slow path), with no such stall.
  template <std::size_t N>
  [[gnu::always_inline]] static void copy_item(std::byte* out, const void* item) noexcept {
    if constexpr (N % 8 == 0 && N > 16 && N <= 8 * k_delta_words) {
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (put_word_bytes(out + 8 * K, word_at(item, K)), ...);
      }(std::make_index_sequence<N / 8>{});
    } else {
      std::memcpy(out, item, N);
    }
  }
  // put_word with memcpy's store, where put_word constructs a uint64_t. A typed lane's cursor is
  // 8-aligned too, but with put_word here toposort's pivot handler, which sends from its loop,
  // ran one instruction more per operation (callgrind, 1 PE: 72.16 against 71.15).
  static void put_word_bytes(std::byte* out, std::uint64_t w) noexcept {
#if defined(__GNUC__)
    asm("" : "+r"(w));
#endif
    std::memcpy(out, &w, 8);
  }
  // Appends a record to the open run whose varying words are V; false (nothing written) if one
  // of its constant words differs. (Inlined into its case of the send's switch: GCC otherwise
  // keeps a case out of line where the caller's size tips it, 16 instructions a send more on
  // permute-matrix's reply.)
  template <std::size_t W, std::size_t V>
  [[gnu::always_inline]] static bool put_record(lane& ln, const void* words) noexcept {
    const bool same = [&]<std::size_t... K>(std::index_sequence<K...>) {
      return ((((V >> K) & 1u) != 0 || word_at(words, K) == ln.base[K]) && ...);
    }(std::make_index_sequence<W>{});
    if (MAILROOM_UNLIKELY(!same)) return false;
    if constexpr (V == 0) {
      ++ln.rs.run_items;
    } else {
      std::byte* out = ln.pos;
      ln.pos = out + std::size_t{8} * std::popcount(V);
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((((V >> K) & 1u) != 0 ? (put_word(out, word_at(words, K)), out += 8) : out), ...);
      }(std::make_index_sequence<W>{});
    }
    return true;
  }
  // The same for larger records, whose sets of varying words are too many for a path each:
  // one path per number of varying words NV, its compares and copies unrolled, reading the
  // words at the positions the run listed when it opened (an index load more per word).
  template <std::size_t W, std::size_t NV>
  static bool put_counted(lane& ln, const void* words) noexcept {
    const run_state& rs = ln.rs;
    const bool same = [&]<std::size_t... J>(std::index_sequence<J...>) {
      return ((word_at(words, rs.pos[NV + J]) == rs.base[rs.pos[NV + J]]) && ...);
    }(std::make_index_sequence<W - NV>{});
    if (MAILROOM_UNLIKELY(!same)) return false;
    // Every word is loaded before the first store: a store through std::byte* may alias
    // anything, so the compiler would otherwise reload the positions after each one.
    if constexpr (NV > 0) {
      std::uint64_t v[NV];
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        ((v[J] = word_at(words, rs.pos[J])), ...);
      }(std::make_index_sequence<NV>{});
      std::byte* out = ln.pos;
      ln.pos = out + sizeof v;
      std::memcpy(out, v, sizeof v);
    } else {
      ++ln.rs.run_items;
    }
    return true;
  }
  template <std::size_t W>
  [[gnu::always_inline]] static bool put_record_any(lane& ln, const void* words) noexcept {
    MAILROOM_ASSERT(ln.rs.varying <= W);
    // (Inlined into the send: called from two places, push_delta and the routed path, GCC
    // would otherwise keep it out of line, 19 instructions more per send of a 9-word closure.)
    return [&]<std::size_t... NV>(std::index_sequence<NV...>) __attribute__((always_inline)) {
      bool put = false;
      // The open run is of this record's tag, so at most W of its words vary: one of the
      // cases matches (no range check before the jump).
      if (!((ln.rs.varying == NV && (put = put_counted<W, NV>(ln, words), true)) || ...))
        __builtin_unreachable();
      return put;
    }
    (std::make_index_sequence<W + 1>{});
  }
  // The slow path: opens a run whose constant words are the record's, and appends the record.
  // It takes the words by value, so that the fast path's words need not live in memory.
  template <std::size_t W>
  [[gnu::noinline]] static void open_and_put(lane& ln, const std::uint32_t& tag,
                                             record_words<W> c) noexcept {
    open_delta_run<W>(ln, tag, c.data());
    put_varying(ln, c.data());
  }
  template <std::size_t W, class... Word>
  [[gnu::noinline]] static void open_and_put_words(lane& ln, const std::uint32_t& tag,
                                                   Word... w) noexcept {
    open_and_put<W>(ln, tag, record_words<W>{w...});
  }
  // Appends the record's varying words, and counts the record.
  static void put_varying(lane& ln, const void* words) noexcept {
    run_state& rs = ln.rs;
    std::byte* out = ln.pos;
    for (std::uint32_t j = 0; j < rs.varying; ++j)
      std::memcpy(out + std::size_t{8} * j, word_ptr(words, rs.pos[j]), 8);
    ln.pos = out + std::size_t{8} * rs.varying;
    if (rs.varying == 0) ++rs.run_items;
  }
  // Opens a run of push_delta records whose constant words are those of `words`, closing the
  // one before. The varying words are learnt: the same tag keeps its set, plus the words that
  // have just changed unless the run was long (they change rarely); another tag starts with
  // none.
  template <std::size_t W>
  static void open_delta_run(lane& ln, const std::uint32_t& tag, const void* words) noexcept {
    MAILROOM_ASSERT(key_of(tag) % k_tag_align == 0);
    run_state& rs = ln.rs;
    std::uint64_t* base = base_of<W>(ln);
    std::uint32_t vary = 0;
    if (rs.last == key_of(tag)) {
      vary = rs.vary;
      if (rs.count_at != 0 && open_records(ln) < k_settled_run)
        for (std::size_t k = 0; k < W; ++k)
          vary |= static_cast<std::uint32_t>(word_at(words, k) != base[k]) << k;
    }
    close_run(ln);
    const std::uint32_t at = used(ln);
    std::byte* h = ln.pos;
    const std::uint32_t header[4] = {tag, 0, vary, 0};
    std::memcpy(h, header, sizeof header);
    ln.open = key_of(tag) + (W <= k_unrolled_delta_words ? vary : 0);
    rs.last = key_of(tag);
    rs.vary = vary;
    rs.varying = static_cast<std::uint32_t>(std::popcount(vary));
    std::byte* out = h + k_delta_run_header;
    std::size_t v = 0, c = rs.varying;
    for (std::size_t k = 0; k < W; ++k) {
      base[k] = word_at(words, k);
      if (((vary >> k) & 1u) != 0) {
        rs.pos[v++] = static_cast<std::uint8_t>(k);
      } else {
        rs.pos[c++] = static_cast<std::uint8_t>(k);
        std::memcpy(out, word_ptr(words, k), 8);
        out += 8;
      }
    }
    ln.pos = out;
    begin_run(ln, at, 8 * rs.varying);
  }
  // The item by value, out of line: were its address passed, the caller's fast path would
  // build the item in memory for it (and reload it, 5 instructions more per send in
  // index-gather), where it now stays in registers.
  template <std::size_t N>
  struct item_copy {
    std::byte b[N];
  };
  template <std::size_t N>
  static item_copy<N> bytes_of(const void* item) noexcept {
    item_copy<N> c;
    std::memcpy(c.b, item, N);
    return c;
  }
  static void write_var(std::byte* out, const void* payload, std::uint32_t len,
                        std::size_t n) noexcept {
    const std::uint64_t zero = 0;
    std::memcpy(out + n - 8, &zero, 8);  // the padding (before the payload: it may overlap)
    const std::uint32_t head[2] = {len, 0};
    std::memcpy(out, head, 8);
    copy_small(out + 8, static_cast<const std::byte*>(payload), len & k_var_len);
  }
  // memcpy for lengths known only at run time, inline up to 64 bytes (messages are mostly
  // small; a call to memcpy costs as much as the copy): two copies of a fixed size that overlap.
  static void copy_small(std::byte* out, const std::byte* in, std::size_t len) noexcept {
    if (len > 64) {
      std::memcpy(out, in, len);
    } else if (len >= 32) {
      std::memcpy(out, in, 32);
      std::memcpy(out + len - 32, in + len - 32, 32);
    } else if (len >= 16) {
      std::memcpy(out, in, 16);
      std::memcpy(out + len - 16, in + len - 16, 16);
    } else if (len >= 8) {
      std::memcpy(out, in, 8);
      std::memcpy(out + len - 8, in + len - 8, 8);
    } else if (len >= 4) {
      std::memcpy(out, in, 4);
      std::memcpy(out + len - 4, in + len - 4, 4);
    } else if (len > 0) {
      out[0] = in[0];
      out[len / 2] = in[len / 2];
      out[len - 1] = in[len - 1];
    }
  }
  // Opens a run of `tag` under `key` whose constant words are the Wc of `constant` and whose
  // records are Wl words each, closing the one before. Only push_bound continues it (no other
  // push's key is `key`), so the run state that push_delta's runs keep is not needed.
  template <std::size_t Wc, std::size_t Wl>
  static void open_bound_run(lane& ln, const std::uint32_t& tag,
                             const bound_record<Wc, Wl>& r) noexcept {
    constexpr std::uint32_t vary =
        ((std::uint32_t{1} << (Wc + Wl)) - 1) & ~((std::uint32_t{1} << Wc) - 1);
    close_run(ln);
    const std::uint32_t at = used(ln);
    std::byte* h = ln.pos;
    const std::uint32_t header[4] = {tag, 0, vary, 0};
    std::memcpy(h, header, sizeof header);
    if constexpr (Wc > 0) std::memcpy(h + k_delta_run_header, r.words.data(), 8 * Wc);
    ln.pos = h + k_delta_run_header + 8 * Wc;
    ln.open = r.key;
    ln.rs.last = r.key;
    begin_run(ln, at, 8 * Wl);
  }
};

}  // namespace mailroom::detail
