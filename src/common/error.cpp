// Fatal-error path: print one line naming the rank, then take the whole job down.
#include "mailroom/error.hpp"

#include "common/hooks.hpp"
#include "common/pe_local.hpp"

#include <cstdio>
#include <cstdlib>

namespace mailroom::detail {

namespace {
int g_rank = -1;
abort_hook g_abort = nullptr;
MAILROOM_PE_LOCAL(g_rank);
MAILROOM_PE_LOCAL(g_abort);
}  // namespace

void set_error_rank(int rank) noexcept { g_rank = rank; }
void set_abort_hook(abort_hook hook) noexcept { g_abort = hook; }
int error_rank() noexcept { return g_rank; }

void fail(const char* file, int line, std::string_view what) noexcept {
  if (g_rank >= 0)
    std::fprintf(stderr, "mailroom: rank %d: %s:%d: %.*s\n", g_rank, file, line,
                 static_cast<int>(what.size()), what.data());
  else
    std::fprintf(stderr, "mailroom: %s:%d: %.*s\n", file, line, static_cast<int>(what.size()),
                 what.data());
  std::fflush(stderr);
  if (g_abort != nullptr) g_abort(1);
  std::_Exit(1);
}

}  // namespace mailroom::detail
