// SPDX-License-Identifier: MIT
// What a team holds: its group of the transport (owned, or the world's), its id among its
// members' teams, and the routes of the selectors over it. Not installed.
#pragma once

#include "aggregation/routes.hpp"
#include "mailroom/detail/scheduler.hpp"
#include "transport/transport.hpp"

#include <cstdint>
#include <memory>

namespace mailroom::detail {

struct team_state {
  /// Team ids a PE may hold at once (the world's, 0, included): the wire ids of the mailboxes
  /// over a team hold them (exchange::k_team_conveyor | id << k_mailbox_bits | mailbox).
  static constexpr std::uint32_t k_ids = 2048;
  static constexpr std::uint32_t k_mailbox_bits = 15;

  team_state(std::unique_ptr<transport::group> g, std::uint32_t team_id) noexcept;
  ~team_state();
  team_state(const team_state&) = delete;
  team_state& operator=(const team_state&) = delete;

  std::unique_ptr<transport::group> own;  // null for the world
  transport::group* group;
  std::uint32_t id;               // 0: the world
  std::uint32_t mailboxes = 0;    // the next mailbox's number (the same on every member)
  std::unique_ptr<routes> lanes;  // its members' routes, from its first mailbox on
};

}  // namespace mailroom::detail
