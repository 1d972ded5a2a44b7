// The spec runner's execution stage, over commands already converted (by wast2json or spec_script.h).
#pragma once

#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/spec_runner.h"
#include "spec/spec_script.h"

namespace dlab::wasm {

// Runs `step` (decode, validate, link or instantiate a module) and says how it ended: "ok", or
// "malformed: ...", "invalid: ...", "unlinkable: ...", "unsupported: ...", "implementation limit:
// ..." or "trap: ..." (the spec runner compares these prefixes with each assertion's kind).
std::string outcome_of(const std::function<void()>& step);

void execute_commands(const nlohmann::json& doc, const ScriptModules& modules, const EngineConfig& engine, SpecFileResult& res,
                      bool counting = false);

}  // namespace dlab::wasm
