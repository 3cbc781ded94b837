// SPDX-License-Identifier: MIT
// The simulated machine: P virtual PEs in one process, on a node layout with per-link latency
// and bandwidth, for testing routing, termination and memory at thousands of PEs on a laptop,
// and for reproducing ordering bugs. Every PE runs the same program, as under mpiexec; mailroom
// runs on them unchanged (its MPI transport is replaced by the simulator's, below the
// aggregation layer). The PEs take turns on one thread (cooperative fibers, switched whenever
// a PE polls for messages or waits), in an order and with delivery times drawn from a seed:
// the same seed replays the same run.
//
//   int main(int argc, char** argv) {
//     if (auto m = mailroom::simulated_machine::from_environment())  // MAILROOM_SIM=1024x32
//       return mailroom::simulate(*m, [&] { return real_main(argc, argv); });
//     return real_main(argc, argv);
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace mailroom {

/// A machine for simulate(): its PEs, node layout, links, seed and limits.
struct simulated_machine {
  int pes = 1;                        ///< virtual PEs, all in this process
  int per_node = 1;                   ///< PEs per node (the last node may have fewer)
  double network_latency = 2e-6;      ///< seconds, one way, between PEs of different nodes
  double network_bandwidth = 12.5e9;  ///< bytes per second per pair of PEs
  double node_latency = 4e-7;         ///< the same within a node (MPI messages there)
  double node_bandwidth = 50e9;       ///< the same within a node
  /// Each delivery is later by up to this fraction of its latency, and each turn of a PE costs
  /// up to this fraction more, drawn from the seed (0: a fixed order).
  double jitter = 0.5;
  std::uint64_t seed = 1;  ///< draws the jitter and the PEs' order: the same seed, the same run
  std::size_t stack_bytes = 0;  ///< per PE; 0: 256 KiB, 1 MiB under AddressSanitizer
  /// Real seconds one PE may run without letting the others have a turn before the simulation
  /// stops with a report (a loop that waits without polling mailroom).
  double stall_seconds = 120;

  /// "P[xN][,key=value...]", keys seed, latency and node_latency (microseconds), bandwidth and
  /// node_bandwidth (GB/s), jitter, stack (bytes; K/M suffixes), stall (seconds): e.g.
  /// "2048x32,seed=7".
  /// A malformed spec is a fatal error that names the part it could not read.
  static simulated_machine parse(std::string_view spec);
  /// From MAILROOM_SIM, if set (and not empty).
  static std::optional<simulated_machine> from_environment();
  /// One line: PEs, layout, links and seed (what replays the run).
  [[nodiscard]] std::string describe() const;
};

/// Runs program() once on each of m.pes virtual PEs (each constructs its mailroom::runtime as
/// usual) and returns when all have returned: 0 if every PE's program returned 0, else the
/// first non-zero value by rank. A PE that throws, a fatal error and a deadlock (no PE finding
/// anything to do for 2,000 turns each) end the process with a report, as a failing MPI job ends.
int simulate(const simulated_machine& m, const std::function<int()>& program);

/// True on a PE of a simulated machine.
[[nodiscard]] bool simulated() noexcept;

}  // namespace mailroom
