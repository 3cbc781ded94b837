// SPDX-License-Identifier: MIT
// mailroom-bench stream: the machine's memory bandwidth, measured as STREAM does (see stream.cpp).
#pragma once

namespace mailroom::apps {
/// Runs `mailroom-bench stream ...` (argv[0] is "stream") on every PE of the job; returns the exit
/// status (2 for a mistake on the command line, 1 when the kernels' results are wrong).
int run_stream(int argc, char** argv);
}  // namespace mailroom::apps
