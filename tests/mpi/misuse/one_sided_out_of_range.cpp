// SPDX-License-Identifier: MIT
// Misuse: a one-sided get past the end of the array must stop the job with the range, not read
// another block of the heap.
#include <mailroom/mailroom.hpp>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::symmetric_array<int> a(10);
  (void)a.get(mr::this_pe(), 10);
  return 0;  // not reached
}
