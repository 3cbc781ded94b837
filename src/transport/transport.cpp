// SPDX-License-Identifier: MIT
// MPI start-up, job-wide queries and the MPI error checker.
#include "transport/transport.hpp"

#include "common/hooks.hpp"
#include "common/pe_local.hpp"
#include "transport/backend.hpp"
#include "transport/mpi_check.hpp"
#include "transport/node_reduce.hpp"
#include "transport/sim.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace mailroom::transport {

namespace {
bool g_we_initialised = false;
bool g_up = false;
int g_rank = 0;
int g_size = 1;
node_layout g_layout;
MPI_Comm g_comm = MPI_COMM_NULL;  // mailroom's duplicate of the runtime's communicator
MPI_Comm g_node_comm = MPI_COMM_NULL;
progress_hooks g_hooks;
MAILROOM_PE_LOCAL(g_up);
MAILROOM_PE_LOCAL(g_rank);
MAILROOM_PE_LOCAL(g_size);
MAILROOM_PE_LOCAL(g_layout);
MAILROOM_PE_LOCAL(g_hooks);

// What mailroom needs of MPI's threading: all of its MPI calls come from the thread that
// constructed the runtime (the pool workers hand their sends to it), or with a progress thread
// (MAILROOM_PROGRESS=thread) from it and that thread by turns. (Not MPI_THREAD_MULTIPLE, which
// the program's own MPI calls beside a progress thread would need: Open MPI 4.1's one-sided
// windows through osc/pt2pt refuse it, MPI_ERR_WIN.)
constexpr int k_thread_level = MPI_THREAD_FUNNELED;
constexpr int k_thread_level_turns = MPI_THREAD_SERIALIZED;

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE:
      return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED:
      return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED:
      return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE:
      return "MPI_THREAD_MULTIPLE";
    default:
      return "an unknown thread level";
  }
}

void mpi_abort_hook(int code) {
  // The message is already written to stderr, but MPICH's mpiexec (hydra) exits as soon as it
  // hears of the abort, dropping output its proxy has not forwarded yet (1 run in 10 at 2 PEs):
  // give the message time to get out first.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  MPI_Abort(g_comm != MPI_COMM_NULL ? g_comm : MPI_COMM_WORLD, code);
}
}  // namespace

void set_progress_hooks(progress_hooks hooks) noexcept { g_hooks = hooks; }
void note_poll(bool any) noexcept {
  if (sim::active()) sim::note_poll(any);
}

std::byte* simulated_heap_start(std::size_t bytes) { return sim::heap_start(bytes); }
void simulated_heap_map() noexcept { sim::heap_map(); }

namespace sim {
bool runtime_active() noexcept {
  return computing_collectives() || (g_hooks.active != nullptr && g_hooks.active());
}
void wait_step(const char* what, bool progress) {
  if (progress && runtime_active() && g_hooks.progress != nullptr)
    g_hooks.progress(what);
  else
    yield();
}
const char* runtime_wait() noexcept {
  return g_hooks.waiting_in != nullptr ? g_hooks.waiting_in() : nullptr;
}
}  // namespace sim

namespace detail {
MPI_Comm comm() noexcept { return g_comm; }
MPI_Comm node_comm() noexcept { return g_node_comm; }

bool progress_active() noexcept {
  return node_reductions_in_flight() > 0 || (g_hooks.active != nullptr && g_hooks.active());
}

void finish_duplicates() {
  while (!advance_duplicates())
    if (progress_active() && g_hooks.progress != nullptr) g_hooks.progress("MPI_Comm_idup");
}

void wait_progressing(MPI_Request& req, const char* what) {
  if (!progress_active()) {
    MAILROOM_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
    return;
  }
  int flag = 0;
  for (;;) {
    MAILROOM_MPI(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    if (flag != 0) return;
    if (g_hooks.progress != nullptr) g_hooks.progress(what);
  }
}

void wait_request(request& r, const char* what) {
  while (!r.test()) {
    if (sim::active())
      sim::wait_step(what, true);
    else if (progress_active() && g_hooks.progress != nullptr)
      g_hooks.progress(what);
  }
}
void mpi_failed(int rc, const char* call, const char* file, int line) noexcept {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  mailroom::detail::fail_fmt(file, line, "{} failed: {}", call, std::string_view(text, len));
}

void mpi_off_thread(const char* call, const char* file, int line) noexcept {
  mailroom::detail::fail_fmt(file, line,
                             "{} called on worker {}, which may not call MPI: a mailroom call "
                             "reached MPI outside the main flow's turn (MAILROOM_PROGRESS=thread) "
                             "or from a pool worker",
                             call, mailroom::detail::t_worker);
}
}  // namespace detail

void init(int* argc, char*** argv, bool world, std::int64_t comm_f, bool serialized) {
  if (sim::active()) {
    sim::describe_pe(g_rank, g_size, g_layout);
    mailroom::detail::set_error_rank(g_rank);
    mailroom::detail::set_abort_hook(&sim::abort);
    g_up = true;
    detail::start_groups();
    return;
  }
  int already = 0;
  MPI_Initialized(&already);
  MAILROOM_CHECK(already != 0 || world,
                 "mailroom::runtime on a communicator of the program's: initialise MPI first "
                 "(MPI_Init_thread with {})",
                 thread_level_name(k_thread_level));
  if (already == 0) {
#if defined(OPEN_MPI) && OPEN_MPI
    // Open MPI 4.1 picks osc/rdma for one-sided windows by default, whose 64-bit
    // MPI_Compare_and_swap over shared memory crashes (a known Open MPI bug) and whose other
    // operations are 3x slower than osc/sm's. Prefer sm (one node) then pt2pt, unless the user
    // chose; this only concerns the symmetric heap's window (one-sided operations beyond the
    // node).
    setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
#endif
    int provided = 0;
    const int wanted = serialized ? k_thread_level_turns : k_thread_level;
    if (MPI_Init_thread(argc, argv, wanted, &provided) != MPI_SUCCESS)
      MAILROOM_FAIL("MPI_Init_thread failed");
    g_we_initialised = true;
    MAILROOM_CHECK(provided >= wanted, "MPI provides only {}; mailroom needs {}{}",
                   thread_level_name(provided), thread_level_name(wanted),
                   serialized ? " for MAILROOM_PROGRESS=thread" : "");
  } else {
    // The program initialised MPI: any level will do as long as mailroom's calls come from the
    // thread that did (MPI_THREAD_SINGLE and FUNNELED both promise that much).
    int provided = 0, main_thread = 0;
    MPI_Query_thread(&provided);
    MPI_Is_thread_main(&main_thread);
    MAILROOM_CHECK(provided >= MPI_THREAD_SERIALIZED || main_thread != 0,
                   "mailroom::runtime constructed on a thread other than the one that "
                   "initialised MPI, which provides {}: construct it on that thread, or "
                   "initialise MPI with MPI_THREAD_SERIALIZED",
                   thread_level_name(provided));
  }
  // mailroom's own duplicate: its errors come back to us and go through one checker that names
  // the call and the rank; the program's communicator keeps its error handler.
  MPI_Comm user = world ? MPI_COMM_WORLD : MPI_Comm_f2c(static_cast<MPI_Fint>(comm_f));
  MAILROOM_CHECK(user != MPI_COMM_NULL, "mailroom::runtime on MPI_COMM_NULL");
  const int dup_rc = MPI_Comm_dup(user, &g_comm);
  MAILROOM_CHECK(dup_rc == MPI_SUCCESS,
                 "mailroom::runtime: MPI_Comm_dup of its communicator "
                 "failed (error {})",
                 dup_rc);
  MAILROOM_MPI(MPI_Comm_set_errhandler(g_comm, MPI_ERRORS_RETURN));
  MAILROOM_MPI(MPI_Comm_rank(g_comm, &g_rank));
  MAILROOM_MPI(MPI_Comm_size(g_comm, &g_size));
  mailroom::detail::set_error_rank(g_rank);
  mailroom::detail::set_abort_hook(&mpi_abort_hook);

  // Kept for the node's shared memory (node_memory) until finalize.
  MAILROOM_MPI(
      MPI_Comm_split_type(g_comm, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &g_node_comm));
  MPI_Comm node_comm = g_node_comm;
  MAILROOM_MPI(MPI_Comm_rank(node_comm, &g_layout.node_rank));
  MAILROOM_MPI(MPI_Comm_size(node_comm, &g_layout.node_size));
  // Node leaders (node_rank 0) number the nodes in order of their world rank.
  MPI_Comm leaders = MPI_COMM_NULL;
  MAILROOM_MPI(
      MPI_Comm_split(g_comm, g_layout.node_rank == 0 ? 0 : MPI_UNDEFINED, g_rank, &leaders));
  int node = 0, nodes = 0;
  if (leaders != MPI_COMM_NULL) {
    MAILROOM_MPI(MPI_Comm_rank(leaders, &node));
    MAILROOM_MPI(MPI_Comm_size(leaders, &nodes));
    MAILROOM_MPI(MPI_Comm_free(&leaders));
  }
  MAILROOM_MPI(MPI_Bcast(&node, 1, MPI_INT, 0, node_comm));
  MAILROOM_MPI(MPI_Bcast(&nodes, 1, MPI_INT, 0, node_comm));
  g_layout.node = node;
  g_layout.nodes = nodes;
  g_up = true;
  detail::start_groups();
}

void finalize() {
  if (!g_up) return;
  g_up = false;
  detail::stop_groups();
  mailroom::detail::set_abort_hook(nullptr);
  g_hooks = {};
  if (sim::active()) return;
  MPI_Comm_free(&g_node_comm);
  MPI_Comm_free(&g_comm);
  if (g_we_initialised) MPI_Finalize();
}

bool initialized() noexcept { return g_up; }
int rank() noexcept { return g_rank; }
int size() noexcept { return g_size; }
const node_layout& layout() noexcept { return g_layout; }
void barrier() {
  if (sim::active()) return sim::barrier();
  MAILROOM_COLLECTIVE(MPI_Ibarrier, g_comm);
}
double wtime() noexcept { return sim::active() ? sim::wtime() : MPI_Wtime(); }
void abort(int code) noexcept {
  if (sim::active()) sim::abort(code);
  mpi_abort_hook(code);
  std::_Exit(code);
}

bool threads_allowed(bool serialized) {
  if (sim::active()) return false;
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return provided >= (serialized ? k_thread_level_turns : k_thread_level);
}

const char* thread_level() {
  if (sim::active()) return "none (the simulated machine)";
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  return thread_level_name(provided);
}

std::string library_version() {
  if (sim::active()) return sim::library_version();
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MAILROOM_MPI(MPI_Get_library_version(text, &len));
  std::string s(text, static_cast<std::size_t>(len));
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  while (!s.empty() && (s.back() == ',' || s.back() == ' ' || s.back() == '\0')) s.pop_back();
  return s;
}

namespace {
std::int64_t allreduce(std::int64_t v, MPI_Op op) {
  std::int64_t out = 0;
  MAILROOM_COLLECTIVE(MPI_Iallreduce, &v, &out, 1, MPI_INT64_T, op, g_comm);
  return out;
}
}  // namespace
std::int64_t allreduce_min(std::int64_t v) {
  return sim::active() ? sim::allreduce(v, sim::reduce_op::min) : allreduce(v, MPI_MIN);
}
std::int64_t allreduce_max(std::int64_t v) {
  return sim::active() ? sim::allreduce(v, sim::reduce_op::max) : allreduce(v, MPI_MAX);
}
std::int64_t allreduce_sum(std::int64_t v) {
  return sim::active() ? sim::allreduce(v, sim::reduce_op::sum) : allreduce(v, MPI_SUM);
}

void broadcast(void* data, std::size_t bytes, int root) {
  MAILROOM_CHECK(bytes <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "broadcast of {} bytes: MPI counts are ints; send it in parts", bytes);
  if (sim::active()) return sim::broadcast(data, bytes, root);
  MAILROOM_COLLECTIVE(MPI_Ibcast, data, static_cast<int>(bytes), MPI_BYTE, root, g_comm);
}

double round_trip_seconds(int batches) {
  MAILROOM_CHECK(batches >= 1, "round_trip_seconds: {} batches (give at least one)", batches);
  const int last = size() - 1;
  if (last == 0) return 0;
  if (sim::active()) return sim::round_trip_seconds();
  constexpr int k_exchanges = 200;
  constexpr int k_tag = 0x6d72;  // no other traffic of mailroom's communicator is point to point
  std::vector<double> per_batch;
  for (int b = 0; b < batches; ++b) {
    barrier();
    const double t0 = wtime();
    char byte = 0;
    for (int i = 0; i < k_exchanges; ++i) {
      if (rank() == 0) {
        MAILROOM_MPI(MPI_Send(&byte, 0, MPI_BYTE, last, k_tag, g_comm));
        MAILROOM_MPI(MPI_Recv(&byte, 0, MPI_BYTE, last, k_tag, g_comm, MPI_STATUS_IGNORE));
      } else if (rank() == last) {
        MAILROOM_MPI(MPI_Recv(&byte, 0, MPI_BYTE, 0, k_tag, g_comm, MPI_STATUS_IGNORE));
        MAILROOM_MPI(MPI_Send(&byte, 0, MPI_BYTE, 0, k_tag, g_comm));
      }
    }
    per_batch.push_back((wtime() - t0) / k_exchanges);
  }
  std::sort(per_batch.begin(), per_batch.end());
  double median = per_batch[per_batch.size() / 2];
  broadcast(&median, sizeof median, 0);
  return median;
}

}  // namespace mailroom::transport

// ---- collectives for the memory layer ----------------------------------------------------------
namespace mailroom::transport {

namespace {
// A contiguous type of `elem_bytes` bytes, so that counts stay in elements (freed by the caller).
MPI_Datatype element_type(std::size_t elem_bytes) {
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MAILROOM_MPI(MPI_Type_contiguous(static_cast<int>(elem_bytes), MPI_BYTE, &t));
  MAILROOM_MPI(MPI_Type_commit(&t));
  return t;
}
}  // namespace

void gather(int send, int* recv, int root) {
  if (sim::active()) return sim::gather(send, recv, root);
  MAILROOM_COLLECTIVE(MPI_Igather, &send, 1, MPI_INT, recv, 1, MPI_INT, root, g_comm);
}

int scatter(const int* send, int root) {
  if (sim::active()) return sim::scatter(send, root);
  int out = 0;
  MAILROOM_COLLECTIVE(MPI_Iscatter, send, 1, MPI_INT, &out, 1, MPI_INT, root, g_comm);
  return out;
}

void gatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
             std::size_t elem_bytes, int root) {
  if (sim::active()) return sim::gatherv(send, count, recv, counts, displs, elem_bytes, root);
  MPI_Datatype t = element_type(elem_bytes);
  MAILROOM_COLLECTIVE(MPI_Igatherv, send, count, t, recv, counts, displs, t, root, g_comm);
  MAILROOM_MPI(MPI_Type_free(&t));
}

void scatterv(const void* send, const int* counts, const int* displs, void* recv, int count,
              std::size_t elem_bytes, int root) {
  if (sim::active()) return sim::scatterv(send, counts, displs, recv, count, elem_bytes, root);
  MPI_Datatype t = element_type(elem_bytes);
  MAILROOM_COLLECTIVE(MPI_Iscatterv, send, counts, displs, t, recv, count, t, root, g_comm);
  MAILROOM_MPI(MPI_Type_free(&t));
}

std::int64_t exscan_sum(std::int64_t v) {
  if (sim::active()) return sim::exscan_sum(v);
  std::int64_t out = 0;
  MAILROOM_COLLECTIVE(MPI_Iexscan, &v, &out, 1, MPI_INT64_T, MPI_SUM, g_comm);
  return g_rank == 0 ? 0 : out;  // MPI leaves PE 0's result undefined
}

}  // namespace mailroom::transport
