// The WebAssembly 3.0 spec suite in binary form (.bin.wast, as the reference interpreter writes
// it): a script read by sexpr.h, translated into the command list that wast2json would write for
// the same script (the JSON model execute_commands() and the earlier stages consume), each module's
// bytes kept under the .wasm file name its command names (ScriptModules).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec/sexpr.h"

namespace dlab::wasm {

// A script the translator cannot read: "file:line: what is wrong".
class ScriptError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The modules a command list names by "filename": those the translator read, held in memory, and
// otherwise files in a folder (wast2json's). In memory because the 3.0 suite has 5,888 modules and
// creating a file took about a millisecond each on the development VM's disk: writing and reading
// them back was four fifths of a spec run's time, in the kernel.
class ScriptModules {
 public:
  explicit ScriptModules(std::filesystem::path dir = {}) : dir_(std::move(dir)) {}
  void add(const std::string& name, std::string bytes) { held_[name] = std::move(bytes); }
  // The named module's bytes; throws std::runtime_error naming it when it is neither held nor a
  // readable file in the folder.
  std::vector<uint8_t> bytes(const std::string& name) const;
  const std::map<std::string, std::string>& held() const { return held_; }

 private:
  std::filesystem::path dir_;
  std::map<std::string, std::string> held_;
};

// {"commands": [...]} in wast2json's model, plus what wast2json never writes:
//   "skip": "<reason>" on a command no stage can check yet (assert_exception, GC reference values):
//            counted as skipped with that reason;
//   {"type": "module_definition", "filename"} for a `module definition` never instantiated
//            (decoded and validated only);
//   expected values {"type": "either", "values": [...]} (any alternative), {"type": "refnull"}
//            (any null reference) and value "any" for funcref/externref (any non-null reference);
//            GC's {"type": "anyref"} with "null", a host number (ref.host), or the patterns
//            "struct", "array", "i31", "eq", "any" (ref.struct ... ref.any).
// The modules go into `modules`.
nlohmann::json translate_script(const std::vector<sexpr::Node>& script, const std::string& file, ScriptModules& modules);
nlohmann::json translate_script_file(const std::string& path, ScriptModules& modules);

// Literal bits as the JSON model writes them (decimal), or "nan:canonical" / "nan:arithmetic".
// Throws std::invalid_argument on a literal that is not one.
uint64_t parse_int_literal(const std::string& text, int bits);
std::string parse_float_literal(const std::string& text, int bits, bool patterns);

}  // namespace dlab::wasm
