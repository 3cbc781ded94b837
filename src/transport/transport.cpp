// MPI start-up, job-wide queries and the MPI error checker.
#include "mailroom/transport.hpp"

#include "common/hooks.hpp"
#include "transport/mpi_check.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace mailroom::transport {

namespace {
bool g_we_initialised = false;
bool g_up = false;
int g_rank = 0;
int g_size = 1;
node_layout g_layout;
MPI_Comm g_node_comm = MPI_COMM_NULL;

void mpi_abort_hook(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
}  // namespace

namespace detail {
MPI_Comm node_comm() noexcept { return g_node_comm; }

void mpi_failed(int rc, const char* call, const char* file, int line) noexcept {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  mailroom::detail::fail_fmt(file, line, "{} failed: {}", call, std::string_view(text, len));
}
}  // namespace detail

void init(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (already == 0) {
#if defined(OPEN_MPI) && OPEN_MPI
    // Open MPI 4.1 picks osc/rdma for one-sided windows by default, whose 64-bit
    // MPI_Compare_and_swap over shared memory crashes (a known Open MPI bug) and whose other
    // operations are 3x slower than osc/sm's. Prefer sm (one node) then pt2pt, unless the user
    // chose; this only concerns the one-sided windows of the naive baselines.
    setenv("OMPI_MCA_osc", "sm,pt2pt", 0);
#endif
    int provided = 0;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS)
      MAILROOM_FAIL("MPI_Init_thread failed");
    g_we_initialised = true;
  }
  // Errors come back to us and go through one checker that names the call and the rank.
  MAILROOM_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MAILROOM_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &g_rank));
  MAILROOM_MPI(MPI_Comm_size(MPI_COMM_WORLD, &g_size));
  mailroom::detail::set_error_rank(g_rank);
  mailroom::detail::set_abort_hook(&mpi_abort_hook);

  // Kept for the node's shared memory (node_memory) until finalize.
  MAILROOM_MPI(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL,
                                   &g_node_comm));
  MPI_Comm node_comm = g_node_comm;
  MAILROOM_MPI(MPI_Comm_rank(node_comm, &g_layout.node_rank));
  MAILROOM_MPI(MPI_Comm_size(node_comm, &g_layout.node_size));
  // Node leaders (node_rank 0) number the nodes in order of their world rank.
  MPI_Comm leaders = MPI_COMM_NULL;
  MAILROOM_MPI(MPI_Comm_split(MPI_COMM_WORLD, g_layout.node_rank == 0 ? 0 : MPI_UNDEFINED,
                              g_rank, &leaders));
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
}

void finalize() {
  if (!g_up) return;
  g_up = false;
  mailroom::detail::set_abort_hook(nullptr);
  MPI_Comm_free(&g_node_comm);
  if (g_we_initialised) MPI_Finalize();
}

bool initialized() noexcept { return g_up; }
int rank() noexcept { return g_rank; }
int size() noexcept { return g_size; }
const node_layout& layout() noexcept { return g_layout; }
void barrier() { MAILROOM_MPI(MPI_Barrier(MPI_COMM_WORLD)); }
double wtime() noexcept { return MPI_Wtime(); }
void abort(int code) noexcept {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string library_version() {
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
  MAILROOM_MPI(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, op, MPI_COMM_WORLD));
  return out;
}
}  // namespace
std::int64_t allreduce_min(std::int64_t v) { return allreduce(v, MPI_MIN); }
std::int64_t allreduce_max(std::int64_t v) { return allreduce(v, MPI_MAX); }
std::int64_t allreduce_sum(std::int64_t v) { return allreduce(v, MPI_SUM); }
double allreduce_max_double(double v) {
  double out = 0;
  MAILROOM_MPI(MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  return out;
}

void reduce_scatter_sum(const std::int64_t* in, std::int64_t* out, std::size_t block) {
  MAILROOM_MPI(MPI_Reduce_scatter_block(in, out, static_cast<int>(block), MPI_INT64_T, MPI_SUM,
                                        MPI_COMM_WORLD));
}

void broadcast(void* data, std::size_t bytes, int root) {
  MAILROOM_CHECK(bytes <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                 "broadcast of {} bytes: MPI counts are ints; send it in parts", bytes);
  MAILROOM_MPI(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD));
}

double round_trip_seconds(int batches) {
  MAILROOM_CHECK(batches >= 1, "round_trip_seconds: {} batches (give at least one)", batches);
  const int last = size() - 1;
  if (last == 0) return 0;
  constexpr int k_exchanges = 200;
  constexpr int k_tag = 0x6d72;  // no other traffic of the world communicator is point to point
  std::vector<double> per_batch;
  for (int b = 0; b < batches; ++b) {
    barrier();
    const double t0 = wtime();
    char byte = 0;
    for (int i = 0; i < k_exchanges; ++i) {
      if (rank() == 0) {
        MAILROOM_MPI(MPI_Send(&byte, 0, MPI_BYTE, last, k_tag, MPI_COMM_WORLD));
        MAILROOM_MPI(MPI_Recv(&byte, 0, MPI_BYTE, last, k_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      } else if (rank() == last) {
        MAILROOM_MPI(MPI_Recv(&byte, 0, MPI_BYTE, 0, k_tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MAILROOM_MPI(MPI_Send(&byte, 0, MPI_BYTE, 0, k_tag, MPI_COMM_WORLD));
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
  MAILROOM_MPI(MPI_Gather(&send, 1, MPI_INT, recv, 1, MPI_INT, root, MPI_COMM_WORLD));
}

int scatter(const int* send, int root) {
  int out = 0;
  MAILROOM_MPI(MPI_Scatter(send, 1, MPI_INT, &out, 1, MPI_INT, root, MPI_COMM_WORLD));
  return out;
}

void gatherv(const void* send, int count, void* recv, const int* counts, const int* displs,
             std::size_t elem_bytes, int root) {
  MPI_Datatype t = element_type(elem_bytes);
  MAILROOM_MPI(MPI_Gatherv(send, count, t, recv, counts, displs, t, root, MPI_COMM_WORLD));
  MAILROOM_MPI(MPI_Type_free(&t));
}

void scatterv(const void* send, const int* counts, const int* displs, void* recv, int count,
              std::size_t elem_bytes, int root) {
  MPI_Datatype t = element_type(elem_bytes);
  MAILROOM_MPI(MPI_Scatterv(send, counts, displs, t, recv, count, t, root, MPI_COMM_WORLD));
  MAILROOM_MPI(MPI_Type_free(&t));
}

std::int64_t exscan_sum(std::int64_t v) {
  std::int64_t out = 0;
  MAILROOM_MPI(MPI_Exscan(&v, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
  return g_rank == 0 ? 0 : out;  // MPI leaves PE 0's result undefined
}

}  // namespace mailroom::transport
