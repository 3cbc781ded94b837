// SPDX-License-Identifier: MIT
// Compile-time handler ids for lambda messages. Every closure type that is ever sent registers
// itself during static initialisation; at start-up the runtime sorts the registry by mangled
// type name (identical on every PE of the same binary, whatever the load address) and numbers
// it, then checks on all PEs that the tables agree. The wire carries that number: no code or
// vtable pointer ever crosses the network, so ASLR is harmless.
#pragma once

#include "mailroom/error.hpp"
#include "mailroom/pe.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace mailroom::detail {

/// Runs one run of closures of one type, starting at its run header [id][count], sent by
/// `from` to a mailbox of the selector `self`; returns where the run ends. One indirect call
/// per run, not per message.
using lambda_run_invoker = const std::byte* (*)(const std::byte* run, pe from, void* self) noexcept;

/// A lambda message is called as closure(from, self), closure(from) or closure(), the first it
/// takes (from: the sending PE; self: the selector whose mailbox runs it), like a handler.
template <class L, class Sel>
inline constexpr bool lambda_takes_self = std::is_invocable_v<const L&, pe, Sel&>;
template <class L, class Sel>
inline constexpr bool lambda_callable =
    lambda_takes_self<L, Sel> || std::is_invocable_v<const L&, pe> || std::is_invocable_v<const L&>;
/// What a closure type's handler id depends on besides the closure: the selector type when the
/// closure takes it (its handler casts `self` to that type), nothing (void) otherwise.
template <class L, class Sel>
using lambda_owner = std::conditional_t<lambda_takes_self<L, Sel>, Sel, void>;

// Not always_inline: GCC 12 then refuses to inline the closure into it ("function not
// inlinable"); the flattened decoding loops inline both.
template <class Sel, class L>
inline void call_closure(const L& closure, pe from, void* self) {
  if constexpr (!std::is_void_v<Sel>) {
    closure(from, *static_cast<Sel*>(self));
  } else if constexpr (std::is_invocable_v<const L&, pe>) {
    closure(from);
  } else {
    closure();
  }
}

/// A closure of type L travels as W 8-byte words, split within a run into constant and varying
/// words (see conveyor_core::push_delta), unless it is larger than that coder takes (128 bytes).
/// Words, not smaller units: captures are mostly 8-byte values (pointers, handles, 64-bit
/// indices), and reading them back in pieces would defeat store forwarding on every message.
template <class L>
inline constexpr std::size_t lambda_words = (sizeof(L) + 7) / 8;
template <class L>
inline constexpr bool lambda_delta_coded = lambda_words<L> <= 16;
/// Closures of at most this many words get a decoding loop per set of varying words.
inline constexpr std::size_t k_unrolled_words = 5;

/// A closure's words are its bytes with the padding between and after its captures cleared
/// (GCC's __builtin_clear_padding; elsewhere left as they are). Padding holds whatever the stack
/// held: a closure that captures an int beside 8-byte values would otherwise change a word from
/// one message to the next although no capture did, and that word would cross the wire each time.
template <class L>
inline constexpr bool lambda_padded = !std::has_unique_object_representations_v<L>;
#if defined(__has_builtin)
#if __has_builtin(__builtin_clear_padding)
#define MAILROOM_CLEARS_PADDING 1
#endif
#endif
#ifndef MAILROOM_CLEARS_PADDING
#define MAILROOM_CLEARS_PADDING 0
#endif

/// Word K of a closure of type L: 8 bytes, or fewer for the last word of a closure whose size
/// is not a multiple of 8.
template <class L, std::size_t K>
inline constexpr std::size_t word_bytes = 8 * K + 8 <= sizeof(L) ? 8 : sizeof(L) - 8 * K;

/// Copies the closure into `words` (lambda_words<L> * 8 bytes, aligned for L) with its padding
/// and the tail after it zero.
template <class L>
[[gnu::always_inline]] inline void closure_words(const L& closure, std::byte* words) noexcept {
  // The copy writes every byte of the closure; only the tail after it needs zeros.
  if constexpr (sizeof(L) % 8 != 0)
    std::memset(words + sizeof(L), 0, lambda_words<L> * 8 - sizeof(L));
  [[maybe_unused]] L* copy = ::new (static_cast<void*>(words)) L(closure);
#if MAILROOM_CLEARS_PADDING
  __builtin_clear_padding(copy);
#endif
}

/// Aligned so that its address, with the low bits free, identifies the closure type's runs on
/// the send path (see conveyor_core::push_delta); the wire id comes first, at that address.
struct alignas(32) lambda_entry {
  std::uint32_t wire_id;  ///< assigned at start-up
  std::uint32_t size;     ///< sizeof the closure
  const char* name;
  lambda_run_invoker invoke_run;
  /// Calls one closure from its bytes (a forwarded record, node routing).
  void (*invoke_one)(const std::byte* closure, pe from, void* self) noexcept;
};

inline constexpr std::uint32_t k_unassigned = 0xffffffffu;

bool register_lambda(lambda_entry* e) noexcept;
/// The table indexed by wire id (valid after the runtime started).
extern lambda_entry** g_lambda_table;
extern std::uint32_t g_lambda_count;
/// Numbers the registry and verifies it across PEs (collective; called by the runtime).
void finalize_lambda_registry();

template <class L, class Sel>
const std::byte* invoke_run(const std::byte* run, pe from, void* self) noexcept;
template <class L, class Sel>
void invoke_one(const std::byte* bytes, pe from, void* self) noexcept {
  alignas(L) unsigned char storage[sizeof(L)];
  std::memcpy(storage, bytes, sizeof(L));
  call_closure<Sel>(*std::launder(reinterpret_cast<const L*>(storage)), from, self);
}

/// Calls `count` closures of type L stored one after another, `stride` bytes apart (a run in a
/// pool worker's block of sends to its own PE: mailbox_impl<lambdas>::run_local).
template <class L, class Sel>
void invoke_local_run(const std::byte* p, std::uint32_t count, std::uint32_t stride, pe from,
                      void* self) noexcept {
  for (std::uint32_t r = 0; r < count; ++r, p += stride) {
    alignas(L) unsigned char storage[sizeof(L)];
    std::memcpy(storage, p, sizeof(L));
    call_closure<Sel>(*std::launder(reinterpret_cast<const L*>(storage)), from, self);
  }
}

/// The registry's key: the closure type, and the selector type for closures that take `self`.
template <class L, class Sel>
struct lambda_key {};
template <class L, class Sel = void>
inline lambda_entry lambda_entry_of{k_unassigned, static_cast<std::uint32_t>(sizeof(L)),
                                    typeid(lambda_key<L, Sel>).name(), &invoke_run<L, Sel>,
                                    &invoke_one<L, Sel>};
/// The bytes a closure of wire id `id` takes in a record: its words (checked against the table).
std::size_t lambda_record_bytes(std::uint32_t id) noexcept;
template <class L, class Sel = void>
inline const bool lambda_registered = register_lambda(&lambda_entry_of<L, Sel>);

// Records are decoded into a copy of the closure that is a local of the loop, its words written
// at fixed offsets, which the compiler keeps in registers and the handler reads there. Not into
// memory that the handler then reads: the compiler may read two captures with one 16-byte load,
// which cannot be forwarded from the two 8-byte stores just before it and waits for them to
// reach the cache, on every message (a toposort ran 1.6x slower so; index-gather's lambda kernel
// runs 6% faster with the copy).

// The records of a run whose varying words are the compile-time set V: each record is those
// words, in order, written over the copy made once per run; then the copy is called.
template <class L, class Sel, std::size_t V>
[[gnu::flatten]] const std::byte* invoke_records(const unsigned char* storage, const std::byte* p,
                                                 std::uint32_t count, pe from,
                                                 void* self) noexcept {
  constexpr std::size_t W = lambda_words<L>;
  L closure = *std::launder(reinterpret_cast<const L*>(storage));
  auto* bytes = reinterpret_cast<unsigned char*>(&closure);
  // Small closures (one increment, one store) unrolled, as typed handlers are: the loop's step,
  // compare and branch would otherwise be half of each record's instructions. (Larger ones are
  // not: a loop per set of varying words, 8 times over, would be a lot of code.) The body is
  // spelt out in both loops: as one function that steps p by reference, toposort's lambda kernel
  // took 20% more instructions (97.0 -> 116.8 per operation).
#pragma GCC unroll 8
  for (std::uint32_t r = 0; r < (W <= 2 ? count : 0); ++r) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((((V >> K) & 1u) != 0 ? (std::memcpy(bytes + 8 * K, p, word_bytes<L, K>), p += 8) : p), ...);
    }(std::make_index_sequence<W>{});
    call_closure<Sel>(std::as_const(closure), from, self);
  }
  for (std::uint32_t r = 0; r < (W <= 2 ? 0 : count); ++r) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((((V >> K) & 1u) != 0 ? (std::memcpy(bytes + 8 * K, p, word_bytes<L, K>), p += 8) : p), ...);
    }(std::make_index_sequence<W>{});
    call_closure<Sel>(std::as_const(closure), from, self);
  }
  return p;
}

// The same for closures of more words, whose sets of varying words are too many for a loop
// each: one loop per number NV of varying words, their offsets in the closure read once per run.
// The varying words go to the storage at those offsets, and the copy takes every word from there
// one 8-byte load at a time (each matching a store of its size), through a barrier that keeps
// the compiler from merging the loads again.
template <class L, class Sel, std::size_t NV>
[[gnu::flatten]] const std::byte* invoke_counted(unsigned char* storage, const std::byte* p,
                                                 std::uint32_t count, const std::size_t* offsets,
                                                 pe from, void* self) noexcept {
  constexpr std::size_t W = lambda_words<L>;
  std::size_t off[NV > 0 ? NV : 1];
  for (std::size_t j = 0; j < NV; ++j) off[j] = offsets[j];
  L closure = *std::launder(reinterpret_cast<const L*>(storage));
  auto* bytes = reinterpret_cast<unsigned char*>(&closure);
  for (std::uint32_t r = 0; r < count; ++r) {
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      (std::memcpy(storage + off[J], p + 8 * J, 8), ...);
    }(std::make_index_sequence<NV>{});
    p += 8 * NV;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (
          [&] {
            std::uint64_t w;
            std::memcpy(&w, storage + 8 * K, 8);
#if defined(__GNUC__)
            asm("" : "+r"(w));
#endif
            std::memcpy(bytes + 8 * K, &w, word_bytes<L, K>);
          }(),
          ...);
    }(std::make_index_sequence<W>{});
    call_closure<Sel>(std::as_const(closure), from, self);
  }
  return p;
}

template <class L, class Sel>
const std::byte* invoke_records_any(unsigned char* storage, const std::byte* p, std::uint32_t count,
                                    std::uint32_t vary, pe from, void* self) noexcept {
  constexpr std::size_t W = lambda_words<L>;
  std::size_t offsets[W];
  std::size_t n = 0;
  for (std::size_t k = 0; k < W; ++k)
    if (((vary >> k) & 1u) != 0) offsets[n++] = 8 * k;
  return [&]<std::size_t... NV>(std::index_sequence<NV...>) {
    const std::byte* end = p;
    static_cast<void>(
        ((n == NV ? (end = invoke_counted<L, Sel, NV>(storage, p, count, offsets, from, self), true)
                  : false) ||
         ...));
    return end;
  }(std::make_index_sequence<W + 1>{});
}

template <class L, class Sel>
const std::byte* invoke_run(const std::byte* run, pe from, void* self) noexcept {
  constexpr std::size_t W = lambda_words<L>;
  // The closure is rebuilt word by word in aligned storage (trivially copyable: its bytes make
  // it) and called there; a closure cannot change its own captures (it is called as const).
  alignas(L) alignas(8) unsigned char storage[W * 8] = {};
  std::uint32_t count;
  std::memcpy(&count, run + 4, 4);
  if constexpr (lambda_delta_coded<L>) {
    // [id][count][vary][0], the constant words, then per record the varying words.
    std::uint32_t vary;
    std::memcpy(&vary, run + 8, 4);
    MAILROOM_ASSERT(vary < (1u << W));
    const std::byte* p = run + 16;
    for (std::size_t k = 0; k < W; ++k) {
      if (((vary >> k) & 1u) == 0) {
        std::memcpy(storage + 8 * k, p, 8);
        p += 8;
      }
    }
    if constexpr (W <= k_unrolled_words) {
      // One loop per set of varying words, chosen once per run: the decoding then is as short
      // as a typed message's copy.
      return [&]<std::size_t... V>(std::index_sequence<V...>) {
        const std::byte* end = p;
        static_cast<void>(
            ((vary == V ? (end = invoke_records<L, Sel, V>(storage, p, count, from, self), true)
                        : false) ||
             ...));
        return end;
      }(std::make_index_sequence<std::size_t{1} << W>{});
    } else {
      return invoke_records_any<L, Sel>(storage, p, count, vary, from, self);
    }
  } else {
    const std::byte* p = run + 8;
    const L& closure = *std::launder(reinterpret_cast<const L*>(storage));
    for (std::uint32_t r = 0; r < count; ++r) {
      std::memcpy(storage, p, sizeof(L));
      p += W * 8;
      call_closure<Sel>(closure, from, self);
    }
    return p;
  }
}

}  // namespace mailroom::detail
