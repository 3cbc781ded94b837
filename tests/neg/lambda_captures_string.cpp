// SPDX-License-Identifier: MIT
// Must not compile: a lambda message that captures a std::string by value. MAILROOM_NEG_OK builds
// the allowed twin, which captures plain data instead.
#include <mailroom/mailroom.hpp>

#include <string>

namespace mr = mailroom;

int main(int argc, char** argv) {
  mr::runtime rt(argc, argv);
  mr::actor<> l;
  const std::string s = "a string long enough to live on the heap, not in the object";
#ifdef MAILROOM_NEG_OK
  l.send(mr::pe(0), [first = s[0]] { (void)first; });
#else
  l.send(mr::pe(0), [s] { (void)s.size(); });
#endif
  l.done();
  l.wait();
}
