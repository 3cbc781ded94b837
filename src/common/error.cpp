// SPDX-License-Identifier: MIT
// Fatal-error path: print one line naming the rank, then take the whole job down.
#include "mailroom/error.hpp"

#include "mailroom/detail/thread.hpp"

#include "common/hooks.hpp"
#include "common/pe_local.hpp"

#include <cstdio>
#include <cstdlib>

namespace mailroom::detail {

namespace {
int g_rank = -1;
abort_hook g_abort = nullptr;
thread_local const source_location* t_site = nullptr;
MAILROOM_PE_LOCAL(g_rank);
MAILROOM_PE_LOCAL(g_abort);
MAILROOM_PE_LOCAL(t_site);
}  // namespace

call_site::call_site(const source_location& where) noexcept : previous_(t_site) { t_site = &where; }
call_site::~call_site() { t_site = previous_; }
const source_location* call_site::current() noexcept { return t_site; }

void set_error_rank(int rank) noexcept { g_rank = rank; }
void set_abort_hook(abort_hook hook) noexcept { g_abort = hook; }
int error_rank() noexcept { return g_rank; }

void fail(const char* file, int line, std::string_view what) noexcept {
  char rank[32] = "";
  if (g_rank >= 0) std::snprintf(rank, sizeof rank, "rank %d: ", g_rank);
  if (t_site != nullptr && t_site->line() > 0)
    std::fprintf(stderr, "mailroom: %s%s:%u: %.*s [%s:%d]\n", rank, t_site->file_name(),
                 static_cast<unsigned>(t_site->line()), static_cast<int>(what.size()), what.data(),
                 file, line);
  else
    std::fprintf(stderr, "mailroom: %s%s:%d: %.*s\n", rank, file, line,
                 static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  if (g_abort != nullptr) g_abort(1);
  std::_Exit(1);
}

void check_runtime_thread(const char* what) {
  MAILROOM_CHECK(t_worker <= 0,
                 "{} called from a task or handler on worker {}: only worker 0 (the PE's own "
                 "thread) runs the runtime; from a task or handler, send messages, spawn tasks "
                 "and (tasks) wait for futures, and do the rest from worker 0",
                 what, t_worker);
}

}  // namespace mailroom::detail
