// SPDX-License-Identifier: MIT
// Preloaded into the AddressSanitizer tier's tests (scripts/test.sh): dlclose does nothing, so
// the plugins MPI loads (Open MPI's mca_*.so, PMIx's) stay mapped until the process ends. Their
// allocations can then be named when LeakSanitizer reports at exit, with ASan's fast unwinder
// (one frame, the plugin's: MPI's libraries keep no frame pointers), and lsan.supp suppresses
// them by module. Open MPI 4.1 has no setting of its own for this. Built without the
// sanitizers: mpiexec loads it too.
extern "C" int dlclose(void* /*handle*/) noexcept { return 0; }
