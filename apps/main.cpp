// SPDX-License-Identifier: MIT
// mailroom-bench: see apps/common/driver.hpp and `mailroom-bench --help`.
// With MAILROOM_SIM set (e.g. MAILROOM_SIM=2048x32,seed=7) every PE of a simulated machine runs
// the driver in this one process, without mpiexec (mailroom/simulate.hpp).
#include "common/driver.hpp"

#include <mailroom/simulate.hpp>

int main(int argc, char** argv) {
  if (auto m = mailroom::simulated_machine::from_environment())
    return mailroom::simulate(*m, [&] { return mailroom::apps::run_driver(argc, argv); });
  return mailroom::apps::run_driver(argc, argv);
}
