// What a team holds: its group of the transport (owned, or the world's). Not installed.
#pragma once

#include "mailroom/detail/scheduler.hpp"
#include "mailroom/transport.hpp"

#include <memory>

namespace mailroom::detail {

struct team_state {
  std::unique_ptr<transport::group> own;  // null for the world
  transport::group* group;
};

}  // namespace mailroom::detail
