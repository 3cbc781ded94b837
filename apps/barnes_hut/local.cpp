// SPDX-License-Identifier: MIT
// Barnes-Hut, the floor: the same steps (the sort along the curve, the tree, the update) with each
// body's walk of its own PE's tree only, no other PE's cell or body read: what the walks cost
// without communication. Its accelerations are those of this PE's bodies alone.
#include "barnes_hut/barnes_hut.hpp"

namespace mailroom::apps::barnes_hut {

void local(const problem& pb, state& st) {
  const double eps2 = pb.eps * pb.eps;
  for (std::int64_t s = 0; s < pb.steps; ++s) {
    begin_step(pb, st);
    for (std::size_t i = 0; i < st.particles.size(); ++i) {
      vec3 a;  // (from 0, as the others sum the trees' parts)
      a += walk_own(st.own, st.at[i], static_cast<std::int64_t>(i), eps2);
      st.acc[i] = a;
    }
    end_step(pb, st);
  }
}

}  // namespace mailroom::apps::barnes_hut
