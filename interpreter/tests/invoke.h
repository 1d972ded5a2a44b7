// Test helper: calling an instance's export by name, for its results or for its trap's message.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm::test_support {

inline std::vector<Value> call_export(Runtime& rt, Instance& inst, const std::string& name, std::vector<Value> args = {}) {
  return rt.invoke(inst.exports.at(name).func, args);
}

// The message of the Trap that calling `name` raises, or "no trap".
inline std::string trap_of(Runtime& rt, Instance& inst, const std::string& name, std::vector<Value> args = {}) {
  try {
    call_export(rt, inst, name, std::move(args));
  } catch (const Trap& t) {
    return t.what();
  }
  return "no trap";
}

}  // namespace dlab::wasm::test_support
