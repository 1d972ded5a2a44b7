// The spec runner's execution stage, over commands already converted by wast2json.
#pragma once

#include <filesystem>

#include <nlohmann/json.hpp>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/spec_runner.h"

namespace dlab::wasm {

void execute_commands(const nlohmann::json& doc, const std::filesystem::path& dir, Dispatch dispatch, SpecFileResult& res);

}  // namespace dlab::wasm
