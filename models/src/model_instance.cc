#include <stdexcept>

#include "dispatchlab/models/models.h"

namespace dlab::models {

namespace {
uint64_t mix(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
}  // namespace

ModelInstance::ModelInstance(const ModelEntry& entry, std::vector<DlInst> program, uint64_t state_seed)
    : entry_(&entry), program_(std::move(program)), stack_(1 + 256), heap_(1024), own_(4096) {
  const uint32_t exit = exit_op(entry.model);
  if (program_.empty() || program_.back().op != exit) throw std::invalid_argument("a model program must end with the exit instruction");
  for (const auto& in : program_)
    if (in.op > exit) throw std::invalid_argument("program opcode out of range for " + entry.model);
  for (size_t i = 0; i < heap_.size(); ++i) heap_[i] = mix(state_seed * 1000003 + i);
  for (size_t i = 0; i < own_.size(); ++i) own_[i] = mix(state_seed * 7919 + i + 5000);
  ex_.base = stack_.data() + 1;  // base[-1] is the scratch slot the placements may touch
  ex_.heap = heap_.data();
  ex_.own = own_.data();
  for (int i = 0; i < 16; ++i) ex_.locals[i] = mix(state_seed + 17 * static_cast<uint64_t>(i));
}

ModelInstance::~ModelInstance() = default;

void ModelInstance::run(uint64_t reps) {
  for (uint64_t r = 0; r < reps; ++r) exits_ = mix(exits_ ^ entry_->run(&ex_, program_.data()));
}

uint64_t ModelInstance::checksum() const {
  uint64_t c = exits_;
  for (uint64_t v : ex_.locals) c = mix(c ^ v);
  for (uint64_t v : heap_) c = mix(c ^ v);
  for (uint64_t v : own_) c = mix(c ^ v);
  return c;
}

}  // namespace dlab::models
