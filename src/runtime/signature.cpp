// SPDX-License-Identifier: MIT
// The registry of mailbox signatures: what a signature stands for, to name both PEs' views when
// a buffer arrives for a mailbox that is something else here.
#include "mailroom/detail/signature.hpp"

#include <cxxabi.h>
#include <fmt/format.h>

#include <cstdlib>
#include <memory>
#include <unordered_map>
#include <vector>

namespace mailroom::detail {

namespace {
struct entry {
  const std::type_info* owner;
  std::vector<mailbox_kind> boxes;
};
// Function-local: registrations run during static initialisation, in any order.
std::unordered_map<std::uint32_t, entry>& registry() {
  static std::unordered_map<std::uint32_t, entry> r;
  return r;
}

std::string demangled(const std::type_info& t) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(
      abi::__cxa_demangle(t.name(), nullptr, nullptr, &status), std::free);
  std::string s = status == 0 && name ? std::string(name.get()) : std::string(t.name());
  constexpr std::size_t k_most = 160;
  if (s.size() > k_most) s = s.substr(0, k_most - 3) + "...";
  return s;
}
}  // namespace

std::uint32_t register_signature(const std::type_info& owner, const mailbox_kind* boxes,
                                 std::size_t n) noexcept {
  // FNV-1a of the mangled name: the same in every process of the program.
  std::uint32_t h = 2166136261u;
  for (const char* p = owner.name(); *p != '\0'; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 16777619u;
  h &= ~0xffu;
  if (h == 0) h = 0x100;  // 0 is no signature
  registry().try_emplace(h, entry{&owner, std::vector<mailbox_kind>(boxes, boxes + n)});
  return h;
}

std::string describe_signature(std::uint32_t signature) {
  const auto it = registry().find(signature & ~0xffu);
  const std::size_t index = signature & 0xffu;
  if (it == registry().end() || index >= it->second.boxes.size())
    return fmt::format("an unknown mailbox (signature {:#x})", signature);
  const entry& e = it->second;
  const mailbox_kind& box = e.boxes[index];
  const std::string kind =
      demangled(*e.owner).starts_with("mailroom::conveyor<")
          ? "a conveyor"
          : fmt::format("mailbox {} of a selector of {}", index, e.boxes.size());
  if (box.message == nullptr) return fmt::format("{}: lambda messages", kind);
  return fmt::format("{}: message type `{}`, handler `{}`", kind, demangled(*box.message),
                     demangled(*box.handler));
}

}  // namespace mailroom::detail
