// SPDX-License-Identifier: MIT
// Sanitizer builds only: a program that leaks and one with undefined behaviour, both after MPI is
// up. Each must fail with the sanitizer's report: MPI's suppressed leaks (lsan.supp) never hide
// one of ours, and undefined behaviour stops the program.
#include <mailroom/runtime.hpp>

#include <cstring>
#include <limits>

int main(int argc, char** argv) {
  mailroom::runtime rt(argc, argv);
  if (argc > 1 && std::strcmp(argv[1], "overflow") == 0) {
    volatile int big = std::numeric_limits<int>::max();
    return big + 1 == 0 ? 3 : 0;  // signed overflow
  }
  int* lost = new int[100];
  lost[0] = 0;
  return lost[0];
}
