// SPDX-License-Identifier: MIT
// Barnes-Hut, global-nocache variant: the global variant's walks over arrays whose view caches
// nothing, so that every read of another PE's cell or body is a one-sided get (in place from a
// PE whose memory this one maps): what the cache saves.
#include "barnes_hut/barnes_hut.hpp"

namespace mailroom::apps::barnes_hut {

global_view_options nocache_options() { return {.mode = cache_mode::off}; }

void global_nocache(const problem& pb, state& st, views& v) { global(pb, st, v); }

}  // namespace mailroom::apps::barnes_hut
