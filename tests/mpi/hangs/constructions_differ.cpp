// SPDX-License-Identifier: MIT
// PEs that construct their selectors differently where the types alone cannot tell: each mistake
// must stop the job within seconds, naming both construction sites, before any handler runs on a
// crossed message (a handler that gets another selector's message prints "crossed message
// handled", which the test forbids). Usage: constructions_differ MODE, one of
//   actors        two actor<std::int64_t> (one type), PE 0 constructs apples then pears, the
//                 others pears then apples;
//   handlers      two selectors of one type (one handler struct), swapped the same way;
//   fewer         PE 0 constructs one actor more, between two that every PE constructs;
//   fewer_at_end  PE 0 constructs one actor more, after the last that every PE constructs;
//   teams         two actors over a team of every PE, swapped;
//   rings         four actors in two rings (receives_from both ways), PE 0 closes the first
//                 ring first, the others the second.
// (At 1 PE nothing can differ: the test runs at 2 PEs and up; with MAILROOM_SIM set, on the
// simulated machine.)
#include <mailroom/mailroom.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string_view>

namespace mr = mailroom;

namespace {

// A message carries the tag of the selector it was sent to: a handler that gets another tag
// handles a crossed message.
struct tagged {
  std::int64_t tag;
  std::int64_t value;
};
std::int64_t g_total = 0;
void take(std::int64_t tag, const tagged& m) {
  if (m.tag != tag)
    std::printf("crossed message handled: tag %lld by %lld\n", static_cast<long long>(m.tag),
                static_cast<long long>(tag));
  g_total += m.value;
}

using counter = mr::actor<tagged>;
// Sends to every PE's `c` and ends this PE's stream.
void flood(counter& c, std::int64_t tag) {
  for (int d = 0; d < mr::num_pes(); ++d) c.send(mr::pe(d), tagged{tag, 1});
  c.done();
}
void flood_both(counter& a, counter& b) {
  flood(a, 1);
  flood(b, 2);
  a.wait();
  b.wait();
}

// One handler type for two selectors.
struct handler {
  std::int64_t tag;
  void operator()(const tagged& m) const { take(tag, m); }
};
using pair_selector = mr::selector<mr::mailbox_spec<tagged, handler>>;
void flood_both(pair_selector& a, pair_selector& b) {
  for (int d = 0; d < mr::num_pes(); ++d) {
    a.send<0>(mr::pe(d), tagged{1, 1});
    b.send<0>(mr::pe(d), tagged{2, 1});
  }
  a.done<0>();
  b.done<0>();
  a.wait();
  b.wait();
}

// (Each construction at a line of its own, in branches, as a program would write them.)
void actors(bool first) {
  if (first) {
    counter apples([](const tagged& m) { take(1, m); });
    counter pears([](const tagged& m) { take(2, m); });
    flood_both(apples, pears);
  } else {
    counter pears([](const tagged& m) { take(2, m); });
    counter apples([](const tagged& m) { take(1, m); });
    flood_both(apples, pears);
  }
}

void handlers(bool first) {
  if (first) {
    pair_selector a(mr::mailbox<tagged>(handler{1}));
    pair_selector b(mr::mailbox<tagged>(handler{2}));
    flood_both(a, b);
  } else {
    pair_selector b(mr::mailbox<tagged>(handler{2}));
    pair_selector a(mr::mailbox<tagged>(handler{1}));
    flood_both(a, b);
  }
}

void fewer(bool first, bool at_end) {
  {
    counter common([](const tagged& m) { take(1, m); });
    flood(common, 1);
    common.wait();
  }
  if (first && !at_end) {
    counter extra([](const tagged& m) { take(3, m); });
    flood(extra, 3);
    extra.wait();
  }
  {
    counter last([](const tagged& m) { take(2, m); });
    flood(last, 2);
    last.wait();
  }
  if (first && at_end) {
    counter extra([](const tagged& m) { take(3, m); });
    flood(extra, 3);
    extra.wait();
  }
}

void teams(bool first) {
  const mr::team all = mr::team::world().split(0);
  if (first) {
    counter a(all, [](const tagged& m) { take(1, m); });
    counter b(all, [](const tagged& m) { take(2, m); });
    flood_both(a, b);
  } else {
    counter b(all, [](const tagged& m) { take(2, m); });
    counter a(all, [](const tagged& m) { take(1, m); });
    flood_both(a, b);
  }
}

void rings(bool first) {
  // Each actor passes a message on to its partner in the ring until its hops run out.
  std::unique_ptr<counter> ring[4];
  for (int i = 0; i < 4; ++i)
    ring[i] = std::make_unique<counter>([&ring, i](const tagged& m) {
      take(i / 2 + 1, m);
      if (m.value > 0)
        ring[i ^ 1]->send(mr::pe((mr::this_pe().rank() + 1) % mr::num_pes()),
                          tagged{m.tag, m.value - 1});
    });
  const auto close = [&](int r) {
    ring[2 * r + 1]->receives_from(*ring[2 * r]);
    ring[2 * r]->receives_from(*ring[2 * r + 1]);
  };
  if (first) {
    close(0);
    close(1);
  } else {
    close(1);
    close(0);
  }
  for (int i = 0; i < 4; ++i) {
    ring[i]->send(mr::pe((mr::this_pe().rank() + 1) % mr::num_pes()), tagged{i / 2 + 1, 8});
    ring[i]->done();
  }
  for (auto& r : ring) r->wait();
}

}  // namespace

int run(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  const std::string_view mode = argc > 1 ? argv[1] : "";
  const bool first = mr::this_pe().rank() == 0;
  if (mode == "actors") {
    actors(first);
  } else if (mode == "handlers") {
    handlers(first);
  } else if (mode == "fewer" || mode == "fewer_at_end") {
    fewer(first, mode == "fewer_at_end");
  } else if (mode == "teams") {
    teams(first);
  } else if (mode == "rings") {
    rings(first);
  } else {
    std::fprintf(stderr,
                 "usage: constructions_differ actors|handlers|fewer|fewer_at_end|teams|rings\n");
    return 2;
  }
  std::printf("rank %d: constructions_differ %s: no error reported (total %lld)\n",
              mr::this_pe().rank(), argv[1], static_cast<long long>(g_total));
  return 0;
}

int main(int argc, char** argv) {
  if (auto m = mr::simulated_machine::from_environment())
    return mr::simulate(*m, [&] { return run(argc, argv); });
  return run(argc, argv);
}
