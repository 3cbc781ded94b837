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

using lambda_invoker = void (*)(const std::byte* closure) noexcept;

struct lambda_entry {
  const char* name;
  std::uint32_t size;     ///< sizeof the closure
  std::uint32_t stride;   ///< bytes on the wire: 8-byte id word + closure, rounded up to 8
  lambda_invoker invoke;
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
void invoke_closure(const std::byte* bytes) noexcept {
  // The closure is trivially copyable: copying its bytes into aligned storage creates it.
  alignas(L) unsigned char storage[sizeof(L)];
  std::memcpy(storage, bytes, sizeof(L));
  (*std::launder(reinterpret_cast<L*>(storage)))();
}

template <class L>
inline lambda_entry lambda_entry_of{typeid(L).name(), static_cast<std::uint32_t>(sizeof(L)),
                                    static_cast<std::uint32_t>(8 + (sizeof(L) + 7) / 8 * 8),
                                    &invoke_closure<L>, k_unassigned};
template <class L>
inline const bool lambda_registered = register_lambda(&lambda_entry_of<L>);

}  // namespace mailroom::detail
