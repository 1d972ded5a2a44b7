// The WebAssembly spec-test runner: converts each .wast with wast2json (wabt) at test time, or reads
// a .bin.wast script (the 3.0 suite in binary form) itself (spec_script.h), and runs its commands
// against this interpreter, up to a stage (decode, validate, link, execute).
// Commands a stage cannot check are counted as skipped, by reason, never dropped silently.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dispatchlab/interpreter/runtime.h"

namespace dlab::wasm {

// The spectest host module (print functions that do nothing, globals of 666, a table of 10..20
// funcrefs, a memory of 1..2 pages) as objects of `rt`. linker.h's spectest_exports() is its types.
ExternMap spectest_module(Runtime& rt);

struct SpecFileResult {
  std::string file;
  int passed = 0, failed = 0;
  std::map<std::string, int> skipped;  // reason -> commands
  std::vector<std::string> failures;   // "file:line: expected ..., got ..."
  std::string error;                   // wast2json failed, a .bin.wast script is malformed ("file:line: ..."), ...
};

// kDecode: binary modules decode, binary assert_malformed is rejected by the decoder.
// kValidate: additionally, modules validate and binary assert_invalid is rejected by the validator.
// kLink: additionally, modules link against `spectest` and registered modules, `register` works,
//        and assert_unlinkable is rejected by the linker.
// kExecute: every command: modules instantiate (segments, start functions), actions run in the
//        given dispatch mode, and every assertion is checked against the results and traps.
// `counting`: the execute stage runs in the counting engine of `dlab wasm profile` instead of the
// dispatch mode's (Runtime::enable_profile), which checks at every dispatch that each handler
// consumes the words its layout gives it (ops.h's kDeclaredWords).
enum class SpecStage { kDecode, kValidate, kLink, kExecute };

SpecFileResult run_spec_file(const std::string& wast_path, SpecStage stage = SpecStage::kDecode, const EngineConfig& engine = {},
                             bool counting = false);
// Every .wast under `suite_dir` (recursively), sorted; in a folder with .bin.wast scripts, only those.
// A folder that cannot be read is "folder: why" in `unreadable` (the rest is still listed), or,
// without `unreadable`, a std::runtime_error saying so.
std::vector<std::string> spec_files(const std::string& suite_dir, std::vector<std::string>* unreadable = nullptr);
// Every module of the suite's .bin.wast scripts (those whose path contains `only`) written into
// `out` (new, or an empty folder) as <script>-<n>.wasm: the fuzzer's seeds. Returns how many.
size_t write_suite_modules(const std::string& suite, const std::string& only, const std::string& out);

}  // namespace dlab::wasm
