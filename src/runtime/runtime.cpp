// mailroom::runtime: start-up and shut-down of every layer, in order.
#include "mailroom/runtime.hpp"

#include "mailroom/detail/exchange.hpp"
#include "mailroom/detail/lambda_registry.hpp"
#include "mailroom/symmetric.hpp"
#include "mailroom/transport.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

namespace mailroom {

namespace {
bool g_runtime_exists = false;

// Idle sleep when this node has more PEs than cores and MAILROOM_IDLE_SLEEP_NS is not set: a PE
// that spins while it waits takes the core from one that has work (MPI libraries yield in this
// case too). Measured on a 2-core machine: 4 PEs through 80000 short kernels took 44 s spinning
// and 5 s sleeping once the other programs on the machine kept both cores busy.
constexpr std::uint64_t k_oversubscribed_idle_sleep_ns = 1000;
std::unique_ptr<transport::collective_context> g_barrier;

// A barrier that keeps mailroom moving while it waits: a PE blocked in MPI_Barrier would stop
// taking in buffers, and PEs still sending to it could never reach the barrier.
void progressing_barrier() {
  g_barrier->start_barrier();
  while (!g_barrier->test()) detail::scheduler::progress();
}
}  // namespace

runtime::runtime(int& argc, char**& argv) {
  MAILROOM_CHECK(!g_runtime_exists, "a second mailroom::runtime was constructed; create one per "
                 "program");
  transport::init(&argc, &argv);
  mailroom::config cfg = mailroom::config::from_environment();
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (std::getenv("MAILROOM_IDLE_SLEEP_NS") == nullptr && cores > 0 &&
      transport::layout().node_size > cores)
    cfg.idle_sleep_ns = k_oversubscribed_idle_sleep_ns;
  detail::set_current_config(cfg);
  if (cfg.verbose > 0 && transport::rank() == 0) {
    std::fprintf(stderr, "mailroom: %d PEs on %d node(s), %s\nmailroom configuration:\n%s",
                 transport::size(), transport::layout().nodes,
                 transport::library_version().c_str(), cfg.describe().c_str());
  }
  detail::symmetric_start(cfg.symmetric_heap_bytes);
  detail::finalize_lambda_registry();
  detail::exchange::start(cfg);
  g_barrier = std::make_unique<transport::collective_context>();
  g_runtime_exists = true;
  transport::barrier();
}

runtime::~runtime() {
  MAILROOM_CHECK(detail::scheduler::live.empty(),
                 "mailroom::runtime destroyed while {} selector(s) still exist",
                 detail::scheduler::live.size());
  progressing_barrier();
  g_barrier.reset();
  detail::exchange::stop();
  detail::symmetric_stop();
  g_runtime_exists = false;
  transport::finalize();
}

const mailroom::config& runtime::config() const noexcept { return current_config(); }

pe this_pe() noexcept { return pe(transport::rank()); }
int num_pes() noexcept { return transport::size(); }
double wtime() noexcept { return transport::wtime(); }

void yield() {
  detail::scheduler::check_running("mailroom::yield");
  detail::scheduler::progress();
}

void barrier() {
  detail::scheduler::check_running("mailroom::barrier");
  MAILROOM_CHECK(!detail::scheduler::in_handler(), "barrier() called from a handler: handlers "
                 "must never block");
  progressing_barrier();
}

}  // namespace mailroom
