// Compile-time handler ids for lambda messages. Every closure type that is ever sent registers
// itself during static initialisation; at start-up the runtime sorts the registry by mangled
// type name (identical on every PE of the same binary, whatever the load address) and numbers
// it, then checks on all PEs that the tables agree. The wire carries that number: no code or
// vtable pointer ever crosses the network, so ASLR is harmless.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <typeinfo>

namespace mailroom::detail {

/// Runs one run of closures of one type, starting at its run header [id][count]; returns where
/// the run ends. One indirect call per run, not per message.
using lambda_run_invoker = const std::byte* (*)(const std::byte* run) noexcept;

/// A closure of type L travels as W 8-byte words, delta-coded within a run (see
/// conveyor_core::push_delta), unless it is larger than the delta coder takes (128 bytes).
/// Words, not smaller units: captures are mostly 8-byte values (pointers, handles, 64-bit
/// indices), and reading them back in pieces would defeat store forwarding on every message.
template <class L>
inline constexpr std::size_t lambda_words = (sizeof(L) + 7) / 8;
template <class L>
inline constexpr bool lambda_delta_coded = lambda_words<L> <= 16;
template <class L>
using lambda_mask_t = std::conditional_t<(lambda_words<L> <= 8), std::uint8_t, std::uint16_t>;

struct lambda_entry {
  const char* name;
  std::uint32_t size;     ///< sizeof the closure
  lambda_run_invoker invoke_run;
  std::uint32_t wire_id;  ///< assigned at start-up
};

inline constexpr std::uint32_t k_unassigned = 0xffffffffu;

bool register_lambda(lambda_entry* e) noexcept;
/// The table indexed by wire id (valid after the runtime started).
extern lambda_entry** g_lambda_table;
extern std::uint32_t g_lambda_count;
/// Numbers the registry and verifies it across PEs (collective; called by the runtime).
void finalize_lambda_registry();

template <class L>
const std::byte* invoke_run(const std::byte* run) noexcept;

template <class L>
inline lambda_entry lambda_entry_of{typeid(L).name(), static_cast<std::uint32_t>(sizeof(L)),
                                    &invoke_run<L>, k_unassigned};
template <class L>
inline const bool lambda_registered = register_lambda(&lambda_entry_of<L>);

template <class L>
const std::byte* invoke_run(const std::byte* run) noexcept {
  std::uint32_t count;
  std::memcpy(&count, run + 4, 4);
  const std::byte* p = run + 8;
  constexpr std::size_t W = lambda_words<L>;
  // The closure is rebuilt word by word in aligned storage (trivially copyable: its bytes make
  // it) and called there; a closure cannot change its own captures (it is called as const).
  alignas(L) alignas(8) unsigned char storage[W * 8] = {};
  const L& closure = *std::launder(reinterpret_cast<const L*>(storage));
  if constexpr (lambda_delta_coded<L>) {
    using mask_t = lambda_mask_t<L>;
    for (std::uint32_t r = 0; r < count; ++r) {
      mask_t mask;
      std::memcpy(&mask, p, sizeof mask);
      p += sizeof mask;
      for (std::size_t k = 0; k < W; ++k) {
        if (mask & (mask_t{1} << k)) {  // well predicted: the same captures change every time
          std::memcpy(storage + 8 * k, p, 8);
          p += 8;
        }
      }
      closure();
    }
  } else {
    for (std::uint32_t r = 0; r < count; ++r) {
      std::memcpy(storage, p, sizeof(L));
      p += W * 8;
      closure();
    }
  }
  return p;
}

}  // namespace mailroom::detail
