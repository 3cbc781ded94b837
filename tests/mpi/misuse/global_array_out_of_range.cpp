// SPDX-License-Identifier: MIT
// Misuse: a range read through the global view past the end of the array must stop the job
// with the range and the caller's line, not read another block of the heap.
#include <mailroom/mailroom.hpp>

#include <array>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::global_array<double> a(10);
  std::array<double, 2> two{};
  a.read(9, two);
  return 0;  // not reached
}
