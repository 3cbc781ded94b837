// Teams over the transport's groups.
#include "mailroom/team.hpp"

#include "mailroom/error.hpp"
#include "mailroom/transport.hpp"

#include "pgas/team_state.hpp"

namespace mailroom {

team team::world() {
  auto& g = transport::group::world();  // (checks that the runtime exists)
  return team(std::make_shared<detail::team_state>(detail::team_state{nullptr, &g}));
}

team team::split(int colour, int key) const {
  MAILROOM_CHECK(!detail::scheduler::in_handler(),
                 "team::split called from a handler: it is collective and blocks");
  auto g = state().group->split(colour, key);
  if (g == nullptr) return team(nullptr);
  transport::group* raw = g.get();
  return team(std::make_shared<detail::team_state>(detail::team_state{std::move(g), raw}));
}

int team::rank() const noexcept { return state_ == nullptr ? -1 : state_->group->rank(); }
int team::size() const noexcept { return state_ == nullptr ? 0 : state_->group->size(); }
pe team::world_pe(int r) const noexcept { return pe(state_->group->world_rank(r)); }

detail::team_state& team::state() const {
  MAILROOM_CHECK(state_ != nullptr, "a collective on an empty team (split with a negative "
                 "colour): this PE is not a member");
  return *state_;
}

grid_teams split_grid(int columns) {
  const team w = team::world();
  MAILROOM_CHECK(columns >= 1 && columns <= w.size(), "split_grid({}): the number of columns "
                 "must be in [1, {}]", columns, w.size());
  const int me = w.rank();
  team row = w.split(me / columns, me % columns);
  team column = w.split(me % columns, me / columns);
  return {std::move(row), std::move(column)};
}

}  // namespace mailroom
