#include "dispatchlab/interpreter/spec_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/interpreter/linker.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"
#include "spec/spec_execution.h"
#include "spec/spec_script.h"

namespace dlab::wasm {

namespace fs = std::filesystem;

namespace {
bool is_binary_script(const std::string& path) {
  const std::string ext = ".bin.wast";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}
}  // namespace

std::vector<std::string> spec_files(const std::string& suite_dir, std::vector<std::string>* unreadable) {
  // A suite with scripts in binary form (.bin.wast) runs those only: the 3.0 suite has each script
  // in text/ and in binary/, and the text form needs a text parser (wast2json) that does not know
  // 3.0. A suite of .wast files only (the 2.0 testsuite, a user's own) runs through wast2json.
  // Walked folder by folder with error codes: a folder that cannot be read is named, and the
  // others are still listed (a recursive iterator stops the whole walk at the first one).
  std::vector<std::string> text, binary, bad;
  std::vector<fs::path> folders{suite_dir};
  while (!folders.empty()) {
    fs::path dir = std::move(folders.back());
    folders.pop_back();
    std::error_code ec;
    fs::directory_iterator it(dir, ec), end;
    for (; !ec && it != end; it.increment(ec)) {
      std::error_code type_ec;
      const fs::path& p = it->path();
      // Symbolic links to folders are not followed (a link to a parent would never end).
      if (it->is_directory(type_ec) && !it->is_symlink(type_ec)) folders.push_back(p);
      else if (it->is_regular_file(type_ec) && p.extension() == ".wast") (is_binary_script(p.string()) ? binary : text).push_back(p.string());
    }
    if (ec) bad.push_back(fmt::format("{}: cannot read this folder: {}", dir.string(), ec.message()));
  }
  std::sort(bad.begin(), bad.end());
  if (!bad.empty() && !unreadable) throw std::runtime_error(bad.front());
  if (unreadable) *unreadable = bad;
  std::vector<std::string> out = binary.empty() ? text : binary;
  std::sort(out.begin(), out.end());
  return out;
}

// Every module of the suite's binary scripts, as files: the fuzzer's seeds.
size_t write_suite_modules(const std::string& suite, const std::string& only, const std::string& out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(out, ec) && (!fs::is_directory(out, ec) || !fs::is_empty(out, ec)))
    throw std::runtime_error(out + " exists and is not an empty folder (--modules-out)");
  fs::create_directories(out, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create {}: {}", out, ec.message()));
  size_t written = 0;
  for (const auto& f : spec_files(suite)) {
    if (!only.empty() && f.find(only) == std::string::npos) continue;
    if (f.size() < 9 || f.compare(f.size() - 9, 9, ".bin.wast") != 0) continue;
    ScriptModules modules;
    translate_script_file(f, modules);
    // Named by the script's path below the suite, folders joined by '_': two folders may hold a
    // script of the same name (memory_grow in binary/ and in binary/multi-memory/).
    std::string stem = fs::path(f).lexically_relative(suite).string();
    if (stem.empty() || stem.rfind("..", 0) == 0) stem = fs::path(f).filename().string();
    stem = stem.substr(0, stem.size() - 9);
    std::replace(stem.begin(), stem.end(), '/', '_');
    for (const auto& [name, bytes] : modules.held()) {
      write_output_file((fs::path(out) / (stem + "-" + name)).string(), bytes, ExistingFile::kRefuse);
      ++written;
    }
  }
  if (written == 0) throw std::runtime_error(fmt::format("no module in the .bin.wast scripts of {}", suite));
  return written;
}


namespace {
void check_commands(const nlohmann::json& doc, const ScriptModules& modules, SpecStage stage, SpecFileResult& res);

SpecFileResult run_spec_file_or_throw(const std::string& wast_path, SpecStage stage, const EngineConfig& engine, bool counting) {
  SpecFileResult res;
  res.file = wast_path;
  std::optional<TempDir> scratch;  // wast2json's output: the command list and a file per module
  ScriptModules modules;
  nlohmann::json doc;
  if (is_binary_script(wast_path)) {
    // WebAssembly 3.0 scripts in binary form: read and translated here, no wast2json, no files.
    try {
      doc = translate_script_file(wast_path, modules);
    } catch (const std::bad_alloc&) {
      throw;  // run_spec_file says so
    } catch (const std::exception& e) {  // sexpr::ParseError, ScriptError: "file:line: what"
      res.error = e.what();
      return res;
    }
  } else {
    const fs::path& dir = scratch.emplace("spec").path();
    modules = ScriptModules(dir);
    fs::path json = dir / "commands.json";
    // The tail-call proposal's files need the feature enabled in wabt. The script's path is made
    // absolute: a suite folder named "-s" must reach wast2json as a file, not as an option.
    ProcessOptions po;
    po.stderr_file = (dir / "err.txt").string();
    ProcessResult rc = run_process({"wast2json", "--enable-tail-call", fs::absolute(wast_path).string(), "-o", json.string()}, po);
    if (!rc.ok()) {
      res.error = rc.describe("wast2json") + ": " + read_text_file((dir / "err.txt").string()).substr(0, 300);
      return res;
    }
    std::ifstream(json) >> doc;
  }
  if (stage == SpecStage::kExecute) {
    execute_commands(doc, modules, engine, res, counting);
    return res;
  }
  check_commands(doc, modules, stage, res);
  return res;
}

}  // namespace

SpecFileResult run_spec_file(const std::string& wast_path, SpecStage stage, const EngineConfig& engine, bool counting) {
  // No exception leaves a file: what one throws (out of memory reading a huge script, a command
  // list wast2json wrote that is not what it should be) is that file's error, and the suite goes on.
  try {
    return run_spec_file_or_throw(wast_path, stage, engine, counting);
  } catch (const std::bad_alloc&) {
    SpecFileResult res;
    res.file = wast_path;
    res.error = wast_path + ": out of memory (the script, or what it does, needs more than this process may allocate)";
    return res;
  } catch (const std::exception& e) {
    SpecFileResult res;
    res.file = wast_path;
    res.error = wast_path + ": " + e.what();
    return res;
  }
}

namespace {

// The stages before execution: decode, validate or link every module, and check the assertions
// those stages decide.
void check_commands(const nlohmann::json& doc, const ScriptModules& modules, SpecStage stage, SpecFileResult& res) {
  Linker linker;
  std::optional<Exports> last;
  std::map<std::string, Exports> named;
  const bool linking = stage == SpecStage::kLink;
  // Without execution, sizes of tables and memories are only known until the first action runs
  // (memory.grow may have changed them): later limit mismatches, and everything that depends on
  // the module that hit one, are undetermined and counted as skipped.
  bool executed = false;
  bool last_undetermined = false;
  std::set<std::string> undetermined_modules, undetermined_registered;
  for (const auto& c : doc.at("commands")) {
    if (c.contains("skip")) {
      ++res.skipped[c.at("skip").get<std::string>()];
      continue;
    }
    std::string type = c.at("type");
    const bool definition = type == "module_definition";  // decoded and validated, never linked
    if (definition) type = "module";
    std::string module_type = c.value("module_type", "binary");
    int line = c.value("line", 0);
    auto decodes = [&](std::string& why) {
      try {
        decode_module(modules.bytes(c.at("filename").get<std::string>()));
        return true;
      } catch (const DecodeError& e) {
        why = fmt::format("{} at byte {}", e.what(), e.offset());
        return false;
      }
    };
    // Validation (and linking) stages: "ok", "malformed: ...", "invalid: ..." or "unlinkable: ...".
    Exports exports;
    auto check = [&] {
      return outcome_of([&] {
        auto m = decode_valid_module(modules.bytes(c.at("filename").get<std::string>()));
        if (linking && !definition) exports = linker.link(m);
      });
    };
    std::string why;
    bool validating = stage == SpecStage::kValidate || linking;
    if (type == "action" || type.rfind("assert_return", 0) == 0 || type == "assert_trap" || type == "assert_exhaustion")
      executed = true;
    auto undetermined = [&](const std::string& r) {
      if (r.rfind("unlinkable", 0) != 0) return false;
      if (executed && r.find("(limits)") != std::string::npos) return true;
      for (const auto& reg : undetermined_registered)
        if (r.find(" " + reg + ".") != std::string::npos || r.find("named " + reg + ")") != std::string::npos) return true;
      return false;
    };
    if (linking && type == "register") {
      std::string from = c.value("name", "");
      bool from_undetermined = from.empty() ? last_undetermined : undetermined_modules.count(from) > 0;
      if (from_undetermined) {
        undetermined_registered.insert(c.at("as").get<std::string>());
        ++res.skipped["link depends on execution state (sizes grown at run time)"];
        continue;
      }
      const Exports* ex = from.empty() ? (last ? &*last : nullptr) : (named.count(from) ? &named[from] : nullptr);
      if (ex) {
        linker.register_module(c.at("as").get<std::string>(), *ex);
        ++res.passed;
      } else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: register of a module that did not link", res.file, line));
      }
    } else if (linking && type == "assert_unlinkable" && module_type == "binary") {
      std::string r = check();
      if (r.rfind("unlinkable", 0) == 0) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: expected unlinkable (\"{}\"), got {}", res.file, line, c.value("text", ""), r));
      }
    } else if (validating && type == "module" && module_type == "binary" && c.contains("filename")) {
      std::string r = check();
      if (!definition) last_undetermined = false;
      if (r == "ok") {
        ++res.passed;
        if (linking && !definition) {
          last = exports;
          if (c.contains("name")) named[c.at("name").get<std::string>()] = exports;
        }
      } else if (linking && undetermined(r)) {
        last_undetermined = true;
        if (c.contains("name")) undetermined_modules.insert(c.at("name").get<std::string>());
        ++res.skipped["link depends on execution state (sizes grown at run time)"];
      } else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: module should validate: {}", res.file, line, r));
      }
    } else if (validating && type == "assert_invalid" && module_type == "binary") {
      std::string r = check();
      if (r.rfind("invalid", 0) == 0) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: expected invalid (\"{}\"), got {}", res.file, line, c.value("text", ""), r));
      }
    } else if (type == "module" && module_type == "binary" && c.contains("filename")) {
      if (decodes(why)) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: module should decode: {}", res.file, line, why));
      }
    } else if (type == "assert_malformed" && module_type == "binary") {
      if (!decodes(why)) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("{}:{}: accepted a malformed module (expected \"{}\")", res.file, line, c.value("text", "")));
      }
    } else if (module_type == "text") {
      ++res.skipped["text-format module (not a binary test)"];
    } else if (type == "assert_invalid" || type == "assert_unlinkable" || type == "assert_uninstantiable") {
      ++res.skipped["needs the validator/linker (" + type + ")"];
    } else {
      ++res.skipped["needs execution (" + type + ")"];
    }
  }
}

}  // namespace

}  // namespace dlab::wasm
