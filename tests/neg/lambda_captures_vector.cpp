// SPDX-License-Identifier: MIT
// Must not compile: a lambda message that captures a std::vector by value (it owns heap memory,
// so its bytes mean nothing on another PE). MAILROOM_NEG_OK builds the allowed twin.
#include <mailroom/mailroom.hpp>

#include <vector>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<> l;
  const std::vector<int> v{1, 2, 3};
#ifdef MAILROOM_NEG_OK
  l.send(mr::pe(0), [n = v.size()] { (void)n; });
#else
  l.send(mr::pe(0), [v] { (void)v.size(); });
#endif
  l.done();
  l.wait();
}
