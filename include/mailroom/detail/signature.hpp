// SPDX-License-Identifier: MIT
// Signatures of mailboxes: a 32-bit value per mailbox, from the type of its selector (message
// and handler types), where the program constructed it and its index, carried in every buffer's
// header and checked on arrival, so that PEs that construct their selectors in different orders,
// at different lines or with different mailbox types get an error that shows both PEs' views
// (both construction sites) instead of a hang, a wrong handler or a wrong answer. Not API.
#pragma once

#include "mailroom/error.hpp"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
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
/// The signature of one construction of a type: the type's (`type_signature`, low byte 0) with
/// the construction site (file, line, column), the mailboxes' names and the types their handlers
/// were erased from mixed in, low byte 0, so that two constructions of one type at different
/// lines (or with different names or handlers) differ. (A construction through std::make_unique
/// or std::optional::emplace has its site there, the same for every caller.)
/// Registered on this PE with what it stands for (describe_signature names the site). Called
/// once per construction, never per message.
/// `origins`: per mailbox, the type its handler was erased from (actor<T>), or null.
std::uint32_t construction_signature(std::uint32_t type_signature, const source_location& site,
                                     std::initializer_list<std::string_view> names = {},
                                     std::initializer_list<const std::type_info*> origins = {});
/// The signature of a termination protocol's waves (quiescence::agree_on), from `key` (what the
/// members must agree on: a cycle's selector and component, a ring's members), registered with
/// `what` it is for describe_signature.
std::uint32_t wave_signature(std::uint32_t key, const std::string& what);
/// Removes a wave_signature whose protocol has ended.
void forget_wave_signature(std::uint32_t signature) noexcept;
/// "mailbox 1 of a selector of 2: message type `reply`, handler `main::{lambda(...)#2}`,
/// constructed at main.cpp:12:7", or "an unknown mailbox (signature 0x...)" when this PE has
/// not constructed it (nor anything of its type).
std::string describe_signature(std::uint32_t signature);
/// Whether this PE registered `signature` (constructed that mailbox at that site).
[[nodiscard]] bool known_signature(std::uint32_t signature);

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
