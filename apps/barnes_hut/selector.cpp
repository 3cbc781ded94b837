// SPDX-License-Identifier: MIT
// Barnes-Hut, selector variant (function shipping): for each body and each other PE's tree, a
// request carries the body's position to the tree's owner, whose handler walks its own tree there
// (the same walk, from its own memory) and replies with the tree's part of the acceleration; the
// parts are summed in tree order once every reply has come. Meanwhile this PE walks its own tree.
#include "barnes_hut/barnes_hut.hpp"

namespace mailroom::apps::barnes_hut {

void selector(const problem& pb, state& st) {
  struct request {
    std::int64_t i;  // the body's index on the sender
    vec3 at;
  };
  struct reply {
    std::int64_t i;
    vec3 acc;  // the replying PE's tree's part
  };
  const int P = num_pes(), me = this_pe().rank();
  const double eps2 = pb.eps * pb.eps;
  std::vector<vec3> parts;  // body i's part from tree q at i * P + q
  for (std::int64_t s = 0; s < pb.steps; ++s) {
    begin_step(pb, st);
    const std::size_t n = st.particles.size();
    parts.assign(n * static_cast<std::size_t>(P), vec3{});
    mailroom::selector ship{
        mailbox<request>([&st, eps2](const request& r, pe from, auto& self) {
          self.template send<1>(from, reply{r.i, walk_own(st.own, r.at, -1, eps2)});
        }),
        mailbox<reply>([&parts, P](const reply& r, pe from) {
          parts[static_cast<std::size_t>(r.i * P + from.rank())] = r.acc;
        })};
    for (std::size_t i = 0; i < n; ++i) {
      for (int q = 0; q < P; ++q)
        if (q != me && st.cells_of[static_cast<std::size_t>(q)] > 0)
          ship.send<0>(pe(q), request{static_cast<std::int64_t>(i), st.at[i]});
      parts[i * static_cast<std::size_t>(P) + static_cast<std::size_t>(me)] =
          walk_own(st.own, st.at[i], static_cast<std::int64_t>(i), eps2);
      progress();  // the other PEs' requests handled while this PE walks its own tree
    }
    ship.done<0>();
    ship.wait();
    for (std::size_t i = 0; i < n; ++i) {
      vec3 a;
      for (int q = 0; q < P; ++q)
        a += parts[i * static_cast<std::size_t>(P) + static_cast<std::size_t>(q)];
      st.acc[i] = a;
    }
    end_step(pb, st);
  }
}

}  // namespace mailroom::apps::barnes_hut
