// SPDX-License-Identifier: MIT
// Signatures of mailboxes: a 32-bit value per mailbox, from the type of its selector (message
// and handler types) and its index, carried in every buffer's header and checked on arrival, so
// that PEs that construct their selectors in different orders or with different mailbox types
// get an error that shows both PEs' views instead of a hang or a wrong handler. Not API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <typeinfo>

namespace mailroom::detail {

/// One mailbox of a registered type: its message type (null for lambda messages) and handler.
struct mailbox_kind {
  const std::type_info* message;
  const std::type_info* handler;
};

/// Registers the type `owner` (a selector or conveyor type) with its mailboxes, at static
/// initialisation (every PE runs the same program, so every PE knows every type, whichever it
/// has constructed). Returns the type's signature: a hash of its name whose low byte is 0 (a
/// mailbox's signature adds its index).
std::uint32_t register_signature(const std::type_info& owner, const mailbox_kind* boxes,
                                 std::size_t n) noexcept;
/// "mailbox 1 (of 2) of a selector: message type `reply`, handler `main::{lambda(...)#2}`", or
/// "an unknown mailbox (signature 0x...)".
std::string describe_signature(std::uint32_t signature);

template <class Owner, class... Boxes>
inline const std::uint32_t type_signature = [] {
  static const mailbox_kind kinds[] = {Boxes::kind()...};
  return register_signature(typeid(Owner), kinds, sizeof...(Boxes));
}();

/// A mailbox as type_signature wants it: message type T (void: lambdas), handler H.
template <class T, class H>
struct box_of {
  static mailbox_kind kind() noexcept {
    if constexpr (std::is_void_v<T>)
      return {nullptr, &typeid(H)};
    else
      return {&typeid(T), &typeid(H)};
  }
};

}  // namespace mailroom::detail
