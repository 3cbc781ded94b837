// SPDX-License-Identifier: MIT
// Nothing: the target that builds the precompiled header the MPI tests share (CMakeLists.txt).
