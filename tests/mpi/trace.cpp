// SPDX-License-Identifier: MIT
// MAILROOM_TRACE=FILE (set by the test): after the runtime ends, rank 0 reads the one file the
// PEs' parts were joined into, as JSON, and checks it against what the program did:
//  - every PE's track is named, and no part file is left behind;
//  - the handler batches of the named mailbox "hits" on each PE add up to the messages sent to
//    that PE, and every batch is a span (ph X) with a duration;
//  - the items shipped to other PEs equal the items that arrived from other PEs, PE by PE;
//  - the self-loop mailbox terminated by quiescence waves (at least two on each PE), and each
//    PE's selectors are recorded as terminated;
//  - the all_reduce, blocking and not, is there on every PE.
// Usage: trace [messages per PE]
#include <mailroom/mailroom.hpp>

#include "mpi_check.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace mr = mailroom;
using mailroom_test::g_me;
using mailroom_test::g_pes;

int main(int argc, char** argv) {
  const char* file = std::getenv("MAILROOM_TRACE");
  if (file == nullptr) {
    std::fprintf(stderr, "trace: set MAILROOM_TRACE to the file to write\n");
    return 2;
  }
  std::remove(file);
  int me = 0, pes = 1;
  std::vector<std::int64_t> sent_to;  // (rank 0: gathered, per destination PE)
  int failures = 0;
  {
    mr::runtime rt(argc, argv);
    me = g_me;
    pes = g_pes;
    const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 20000;
    std::vector<std::int64_t> mine(static_cast<std::size_t>(pes), 0);
    std::int64_t hits = 0;
    {
      mr::selector sel{mr::mailbox<std::int64_t>([&](std::int64_t) { ++hits; }).named("hits")};
      for (std::int64_t i = 0; i < n; ++i) {
        const int to = static_cast<int>((i * 7 + me) % pes);
        ++mine[static_cast<std::size_t>(to)];
        sel.send<0>(mr::pe(to), i);
      }
      sel.done<0>();
      sel.wait();
    }
    {  // A self-loop: terminates by waves.
      mr::selector chain{mr::graph{{0, 0}},
                         mr::mailbox<std::int64_t>([&](std::int64_t left, mr::pe, auto& self) {
                           if (left > 0) self.send(mr::to<0>, mr::pe((g_me + 1) % g_pes), left - 1);
                         })};
      if (me == 0) chain.send<0>(mr::pe(0), std::int64_t{1000});
      chain.done<0>();
      chain.wait();
    }
    const std::int64_t total = mr::all_reduce(hits);
    EXPECT(total == n * pes, "%lld messages handled, expected %lld", static_cast<long long>(total),
           static_cast<long long>(n * pes));
    auto later = mr::all_reduce_async(std::int64_t{1});
    EXPECT(later.get() == pes, "all_reduce_async gave %lld", static_cast<long long>(later.get()));
    sent_to.assign(mine.size(), 0);  // messages to each PE, over all senders
    mr::all_reduce(std::span<const std::int64_t>(mine), std::span<std::int64_t>(sent_to));
    failures = static_cast<int>(mr::all_reduce(std::int64_t{failures}));
  }
  if (me != 0) return failures == 0 ? 0 : 1;

  std::ifstream in(file);
  EXPECT(in.good(), "%s was not written", file);
  if (!in.good()) return 1;
  const nlohmann::json trace = nlohmann::json::parse(in);
  const auto& events = trace.at("traceEvents");
  std::map<int, std::int64_t> handled, shipped_out, arrived, waves, terminated, reduces;
  std::map<int, bool> named;
  for (const auto& e : events) {
    const std::string name = e.at("name");
    const std::string ph = e.at("ph");
    const int pid = e.at("pid");
    if (ph == "M") {
      if (name == "process_name" && pid >= 0)
        named[pid] = e.at("args").at("name") == "PE " + std::to_string(pid);
      continue;
    }
    EXPECT(e.at("ts").get<double>() >= 0, "event %s on PE %d before the start", name.c_str(), pid);
    if (ph == "X")
      EXPECT(e.at("dur").get<double>() >= 0, "span %s on PE %d ends before it starts", name.c_str(),
             pid);
    const auto& args = e.at("args");
    if (name.find("'hits'") != std::string::npos) {
      EXPECT(ph == "X", "a handler batch is not a span");
      handled[pid] += args.at("messages").get<std::int64_t>();
    } else if (name == "ship" && args.at("to").get<int>() != pid) {
      shipped_out[args.at("to").get<int>()] += args.at("items").get<std::int64_t>();
    } else if (name == "arrive") {
      arrived[pid] += args.at("items").get<std::int64_t>();
    } else if (name == "termination wave") {
      ++waves[pid];
    } else if (name == "terminated") {
      ++terminated[pid];
    } else if (name == "all_reduce") {
      ++reduces[pid];
    }
  }
  for (int p = 0; p < pes; ++p) {
    EXPECT(named[p], "PE %d's track is not named", p);
    EXPECT(handled[p] == sent_to[static_cast<std::size_t>(p)],
           "PE %d's batches of 'hits' handled %lld messages, %lld were sent to it", p,
           static_cast<long long>(handled[p]),
           static_cast<long long>(sent_to[static_cast<std::size_t>(p)]));
    EXPECT(shipped_out[p] == arrived[p], "%lld items shipped to PE %d, %lld arrived there",
           static_cast<long long>(shipped_out[p]), p, static_cast<long long>(arrived[p]));
    EXPECT(waves[p] >= 2, "PE %d: %lld termination waves", p, static_cast<long long>(waves[p]));
    EXPECT(terminated[p] >= 2, "PE %d: %lld selector components terminated", p,
           static_cast<long long>(terminated[p]));
    // (The test's own blocking all_reduce calls, and the asynchronous one.)
    EXPECT(reduces[p] >= 4, "PE %d: %lld all_reduce spans", p, static_cast<long long>(reduces[p]));
    const std::string part = std::string(file) + "." + std::to_string(p);
    EXPECT(!std::ifstream(part).good(), "%s was left behind", part.c_str());
  }
  if (pes > 1) EXPECT(arrived[1] > 0, "nothing arrived at PE 1");
  std::printf("%s (%d failures; %zu events)\n", failures == 0 ? "PASSED" : "FAILED", failures,
              events.size());
  return failures == 0 ? 0 : 1;
}
