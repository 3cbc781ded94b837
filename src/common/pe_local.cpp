// The registry of per-PE globals (common/pe_local.hpp).
#include "common/pe_local.hpp"

namespace mailroom::detail {

std::vector<pe_locals::entry>& pe_locals::entries() {
  static std::vector<entry> e;  // constructed on first use: static-init order safe
  return e;
}

std::vector<void (*)()>& pe_locals::hooks() {
  static std::vector<void (*)()> h;
  return h;
}

bool pe_locals::on_switch_in(void (*hook)()) {
  hooks().push_back(hook);
  return true;
}

std::vector<void*> pe_locals::make_parked() {
  std::vector<void*> parked;
  parked.reserve(entries().size());
  for (const entry& e : entries()) parked.push_back(e.make(e.initial));
  return parked;
}

void pe_locals::destroy_parked(std::vector<void*>& parked) noexcept {
  const auto& e = entries();
  for (std::size_t i = 0; i < parked.size(); ++i) e[i].destroy(parked[i]);
  parked.clear();
}

void pe_locals::swap(std::vector<void*>& parked) noexcept {
  const auto& e = entries();
  for (std::size_t i = 0; i < parked.size(); ++i) e[i].swap(e[i].var, parked[i]);
}

void pe_locals::run_switch_hooks() {
  for (auto* h : hooks()) h();
}

}  // namespace mailroom::detail
