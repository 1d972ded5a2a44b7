// The engine table of engines.def (private to runtime/): what Runtime's constructor picks its
// engine from (instantiation.cc) and what engine_registry.cc answers about engines with.
#pragma once

#include <cstdint>
#include <string>

#include "dispatchlab/interpreter/runtime.h"
#include "engines/machine.h"

namespace dlab::wasm::runtime_impl {

// Which builds compile an engine: engines.def's BUILD column.
enum class EngineBuild { kDefault, kCompared, kAll };

// The engines of engines.def, as a table.
struct Engine {
  const char* name;
  Dispatch dispatch;
  Placement placement;
  Budget budget;
  Bounds bounds;
  const uint64_t* (*op_words)();  // written on first use (tail engines): ask built() whether it exists
  bool (*built)();
  void (*run)(DLW_HANDLER_PARAMS);
  bool (*register_ir)();
  std::string (*handler_signature)();
  EngineBuild build;
};

// The ENGINE row of these axes, or null (not in engines.def).
const Engine* find_engine(Dispatch d, Placement p, Budget b, Bounds bounds = Bounds::kCheck);

}  // namespace dlab::wasm::runtime_impl
