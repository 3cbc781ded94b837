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
#include <typeinfo>

namespace mailroom::detail {

/// Runs the closure at p and every following one of the same type, up to end; returns where
/// it stopped. One indirect call per run of same-type messages, not per message.
using lambda_run_invoker = const std::byte* (*)(const std::byte* p, const std::byte* end) noexcept;

/// Bytes on the wire for a closure of type L: a 4-byte id, then the closure, rounded up to 4.
template <class L>
inline constexpr std::size_t lambda_stride = 4 + (sizeof(L) + 3) / 4 * 4;

struct lambda_entry {
  const char* name;
  std::uint32_t size;     ///< sizeof the closure
  std::uint32_t stride;   ///< lambda_stride<L>
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
inline void invoke_closure(const std::byte* bytes) noexcept {
  // The closure is trivially copyable: copying its bytes into aligned storage creates it.
  alignas(L) unsigned char storage[sizeof(L)];
  std::memcpy(storage, bytes, sizeof(L));
  (*std::launder(reinterpret_cast<L*>(storage)))();
}

template <class L>
const std::byte* invoke_run(const std::byte* p, const std::byte* end) noexcept;

template <class L>
inline lambda_entry lambda_entry_of{typeid(L).name(), static_cast<std::uint32_t>(sizeof(L)),
                                    static_cast<std::uint32_t>(lambda_stride<L>), &invoke_run<L>,
                                    k_unassigned};

template <class L>
const std::byte* invoke_run(const std::byte* p, const std::byte* end) noexcept {
  const std::uint32_t id = lambda_entry_of<L>.wire_id;
  std::uint32_t next = id;
  do {
    invoke_closure<L>(p + 4);
    p += lambda_stride<L>;
    if (p < end) std::memcpy(&next, p, sizeof next);
  } while (p < end && next == id);
  return p;
}
template <class L>
inline const bool lambda_registered = register_lambda(&lambda_entry_of<L>);

}  // namespace mailroom::detail
