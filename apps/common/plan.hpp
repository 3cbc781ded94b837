// SPDX-License-Identifier: MIT
// mailroom-bench plan: the capacity plan (see plan.cpp).
#pragma once

namespace mailroom::apps {
/// Runs `mailroom-bench plan ...` (argv[0] is "plan"); returns the exit status.
int run_plan(int argc, char** argv);
}  // namespace mailroom::apps
