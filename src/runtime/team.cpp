// SPDX-License-Identifier: MIT
// Teams over the transport's groups, and what selectors over a team need of them.
#include "mailroom/team.hpp"

#include "mailroom/detail/reduction.hpp"
#include "mailroom/error.hpp"
#include "runtime/engine.hpp"
#include "transport/transport.hpp"

#include "aggregation/exchange.hpp"
#include "common/pe_local.hpp"
#include "runtime/team_state.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

namespace mailroom {

namespace detail {
namespace {
// A blocking allreduce (bitwise or, or max) of `count` integers over g, as the public all_reduce
// runs one (it sits in a layer above teams): the progress engine runs while it waits.
template <reduce_kind K, class T>
void allreduce_over(transport::group& g, T* data, std::size_t count, const char* what) {
  static_assert(K == reduce_kind::bor || K == reduce_kind::max);
  // (Element by element through copies: the transport's buffers need not be aligned.)
  const combine_fn combine = [](const void* in, void* inout, std::size_t n, const void*) {
    for (std::size_t i = 0; i < n; ++i) {
      T a, b;
      std::memcpy(&a, static_cast<const std::byte*>(in) + i * sizeof(T), sizeof(T));
      std::memcpy(&b, static_cast<std::byte*>(inout) + i * sizeof(T), sizeof(T));
      b = K == reduce_kind::bor ? a | b : std::max(a, b);
      std::memcpy(static_cast<std::byte*>(inout) + i * sizeof(T), &b, sizeof(T));
    }
  };
  const std::vector<T> in(data, data + count);
  const std::unique_ptr<transport::request> req = g.start_allreduce(
      in.data(), data, count, reduction{elem_type_of<T>(), K, sizeof(T), combine});
  if (!req->wait_idle(what))
    while (!req->test()) engine::progress_waiting(what);
}

// The team ids this PE holds (bit k of word k / 64), the world's (0) always.
using id_set = std::array<std::uint64_t, team_state::k_ids / 64>;
id_set g_team_ids = [] {
  id_set s{};
  s[0] = 1;
  return s;
}();
MAILROOM_PE_LOCAL(g_team_ids);
// Per team id, the number of the next mailbox over a team of that id: a team that takes an id
// again starts above every number its members used with it, so that no acknowledgement still on
// its way for a mailbox of an earlier team can reach one of the new team.
std::vector<std::uint32_t> g_next_mailbox(team_state::k_ids, 0);
MAILROOM_PE_LOCAL(g_next_mailbox);
}  // namespace

team_state::team_state(std::unique_ptr<transport::group> g, std::uint32_t team_id) noexcept
    : own(std::move(g)),
      group(own != nullptr ? own.get() : &transport::group::world()),
      id(team_id) {}

team_state::~team_state() {
  const runtime_turn turn;  // (the group goes in it too)
  if (id != 0) {
    g_team_ids[id / 64] &= ~(std::uint64_t{1} << (id % 64));
    g_next_mailbox[id] = mailboxes;
  }
  own.reset();
}

// (A team's mailbox ids stay below twice k_team_conveyor: acknowledgements hold no more.)
static_assert((team_state::k_ids << team_state::k_mailbox_bits) <= exchange::k_team_conveyor);

team_lanes next_team_mailbox(const team& t) {
  team_state& s = state_of(t);
  MAILROOM_ASSERT(s.id != 0);
  MAILROOM_CHECK(s.mailboxes < (1u << team_state::k_mailbox_bits),
                 "the mailboxes over this team have used all {} numbers of its id ({}; each "
                 "team has at least 16,384): split a new team for more",
                 1u << team_state::k_mailbox_bits, s.id);
  if (s.lanes == nullptr) {
    std::vector<int> members(static_cast<std::size_t>(s.group->size()));
    for (int r = 0; r < s.group->size(); ++r)
      members[static_cast<std::size_t>(r)] = s.group->world_rank(r);
    s.lanes =
        std::make_unique<routes>(routes::members(transport::rank(), transport::size(), members));
  }
  const std::uint32_t id =
      exchange::k_team_conveyor | s.id << team_state::k_mailbox_bits | s.mailboxes++;
  return team_lanes{s.lanes.get(), id};
}

bool over_world(const team& t) { return state_of(t).id == 0; }

transport::group& group_of(const team& t) { return *state_of(t).group; }
}  // namespace detail

team team::world() {
  (void)transport::group::world();  // (checks that the runtime exists)
  return team(std::make_shared<detail::team_state>(nullptr, 0));
}

team team::split(int colour, int key, source_location loc) const {
  const detail::runtime_turn turn;
  const detail::call_site here(loc);
  MAILROOM_CHECK(!detail::scheduler::in_handler(),
                 "team::split called from a handler: it is collective and blocks");
  auto g = detail::state_of(*this).group->split(colour, key);
  if (g == nullptr) return team(nullptr);
  // The new team's id: the lowest that none of its members holds (so the ids of the mailboxes
  // over it name them on every member, whatever other teams each belongs to).
  team out(std::make_shared<detail::team_state>(std::move(g), 0));
  // (An id whose numbers are half used counts as held: a team always has 16,384 to itself.)
  detail::id_set used = detail::g_team_ids;
  for (std::uint32_t i = 1; i < detail::team_state::k_ids; ++i)
    if (detail::g_next_mailbox[i] >= 1u << (detail::team_state::k_mailbox_bits - 1))
      used[i / 64] |= std::uint64_t{1} << (i % 64);
  detail::engine::check_not_completing("team::split");
  detail::allreduce_over<detail::reduce_kind::bor>(*out.state_->group, used.data(), used.size(),
                                                   "team::split");
  std::uint32_t id = 0;
  for (std::size_t w = 0; w < used.size() && id == 0; ++w)
    if (~used[w] != 0)
      id =
          static_cast<std::uint32_t>(64 * w) + static_cast<std::uint32_t>(std::countr_one(used[w]));
  MAILROOM_CHECK(id != 0,
                 "team::split: no team id is left: a PE of the new team holds {} teams "
                 "(teams whose selectors used 65,536 mailboxes count for good); let go of teams "
                 "no longer needed",
                 detail::team_state::k_ids - 1);
  detail::g_team_ids[id / 64] |= std::uint64_t{1} << (id % 64);
  out.state_->id = id;
  out.state_->mailboxes = detail::g_next_mailbox[id];
  detail::allreduce_over<detail::reduce_kind::max>(*out.state_->group, &out.state_->mailboxes, 1,
                                                   "team::split");
  return out;
}

int team::rank() const noexcept { return state_ == nullptr ? -1 : state_->group->rank(); }
int team::size() const noexcept { return state_ == nullptr ? 0 : state_->group->size(); }
pe team::world_pe(int r) const noexcept { return pe(state_->group->world_rank(r)); }

detail::team_state& detail::state_of(const team& t) {
  MAILROOM_CHECK(t.state_ != nullptr,
                 "a collective on an empty team (split with a negative "
                 "colour): this PE is not a member");
  return *t.state_;
}

grid_teams split_grid(int columns, source_location loc) {
  const detail::call_site here(loc);
  const team w = team::world();
  MAILROOM_CHECK(columns >= 1 && columns <= w.size(),
                 "split_grid({}): the number of columns "
                 "must be in [1, {}]",
                 columns, w.size());
  const int me = w.rank();
  team row = w.split(me / columns, me % columns, loc);
  team column = w.split(me % columns, me / columns, loc);
  return {std::move(row), std::move(column)};
}

}  // namespace mailroom
