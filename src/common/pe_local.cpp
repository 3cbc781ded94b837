// SPDX-License-Identifier: MIT
// The registry of per-PE globals (common/pe_local.hpp).
#include "common/pe_local.hpp"

namespace mailroom::detail {

pe_locals::entries_t& pe_locals::registry() {
  static entries_t r;  // constructed on first use: static-init order safe
  return r;
}

pe_locals::entries_t::~entries_t() {
  for (const entry& e : list)
    if (e.initial != nullptr) e.destroy(e.initial);
}

bool pe_locals::on_switch_in(void (*hook)()) {
  registry().hooks.push_back(hook);
  return true;
}

std::vector<void*> pe_locals::make_parked() {
  std::vector<void*> parked;
  parked.reserve(registry().list.size());
  for (const entry& e : registry().list) parked.push_back(e.make(e.initial));
  return parked;
}

void pe_locals::destroy_parked(std::vector<void*>& parked) noexcept {
  const auto& e = registry().list;
  for (std::size_t i = 0; i < parked.size(); ++i) e[i].destroy(parked[i]);
  parked.clear();
}

void pe_locals::swap(std::vector<void*>& parked) noexcept {
  const auto& e = registry().list;
  for (std::size_t i = 0; i < parked.size(); ++i) e[i].swap(e[i].var, parked[i]);
}

void pe_locals::run_switch_hooks() {
  for (auto* h : registry().hooks) h();
}

}  // namespace mailroom::detail
