// SPDX-License-Identifier: MIT
// Teams: subsets of the PEs that run collectives together (as UPC++'s and OpenSHMEM's teams):
// the whole job, a split of a team by colour, or the rows and columns of a 2-D grid of PEs.
#pragma once

#include "mailroom/error.hpp"
#include "mailroom/pe.hpp"

#include <memory>

namespace mailroom {

class team;
namespace detail {
struct team_state;  // the team's communicator (src/runtime/team.cpp)
/// The team's state, for the collectives (fails on an empty team).
team_state& state_of(const team& t);
}  // namespace detail

/// A set of PEs, ranked 0..size()-1, over which collectives run. Cheap to copy (copies share the
/// communicator, freed with the last copy). A PE holds the teams it is a member of.
class team {
 public:
  /// Every PE of the job, ranked as this_pe(). Needs the runtime.
  [[nodiscard]] static team world();

  /// Collective over this team (its members call it in the same order), blocking while the
  /// progress engine keeps running first: the members that give the same `colour` (>= 0) form
  /// a new team, ranked by `key`, then by rank here. A negative colour joins none: the result is
  /// then an empty team (valid() is false).
  [[nodiscard]] team split(int colour, int key = 0,
                           source_location loc = source_location::current()) const;

  /// This PE's rank in the team.
  [[nodiscard]] int rank() const noexcept;
  /// The number of members.
  [[nodiscard]] int size() const noexcept;
  /// The PE of the job that is member r.
  [[nodiscard]] pe world_pe(int r) const noexcept;
  /// False for the empty team a negative colour gives.
  [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }

 private:
  friend detail::team_state& detail::state_of(const team& t);
  explicit team(std::shared_ptr<detail::team_state> s) noexcept : state_(std::move(s)) {}
  std::shared_ptr<detail::team_state> state_;
};

/// The PEs as a grid of `columns` columns (PE p at row p / columns, column p % columns; the
/// last row may be short): the team of this PE's row (ranked by column) and of its column
/// (ranked by row). Collective over the job, as split().
struct grid_teams {
  ///@{
  /// The teams of this PE's row and of its column.
  team row, column;
  ///@}
};
/// This PE's row and column teams in a grid of `columns` columns, 1 to num_pes() (else a fatal
/// error): see grid_teams.
[[nodiscard]] grid_teams split_grid(int columns, source_location loc = source_location::current());

}  // namespace mailroom
