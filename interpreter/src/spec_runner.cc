#include "dispatchlab/interpreter/spec_runner.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::wasm {

namespace fs = std::filesystem;

namespace {
std::vector<uint8_t> read_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

std::vector<std::string> spec_files(const std::string& suite_dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(suite_dir))
    if (e.is_regular_file() && e.path().extension() == ".wast") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

SpecFileResult run_spec_file(const std::string& wast_path, SpecStage stage) {
  SpecFileResult res;
  res.file = wast_path;
  fs::path dir = fs::temp_directory_path() / fmt::format("dlab-spec-{}-{}", getpid(), fs::path(wast_path).stem().string());
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::path json = dir / "commands.json";
  // The tail-call proposal's files need the feature enabled in wabt.
  std::string cmd = fmt::format("wast2json --enable-tail-call {} -o {} 2>{}", quote(wast_path), quote(json.string()),
                                quote((dir / "err.txt").string()));
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream err(dir / "err.txt");
    std::stringstream ss;
    ss << err.rdbuf();
    res.error = "wast2json failed: " + ss.str().substr(0, 300);
    fs::remove_all(dir);
    return res;
  }
  nlohmann::json doc;
  std::ifstream(json) >> doc;
  for (const auto& c : doc.at("commands")) {
    std::string type = c.at("type");
    std::string module_type = c.value("module_type", "binary");
    int line = c.value("line", 0);
    auto decodes = [&](std::string& why) {
      try {
        decode_module(read_bytes(dir / c.at("filename").get<std::string>()));
        return true;
      } catch (const DecodeError& e) {
        why = fmt::format("{} at byte {}", e.what(), e.offset());
        return false;
      }
    };
    // Validation stage: decode + validate; "ok", "invalid: ..." or "malformed: ...".
    auto check = [&]() -> std::string {
      try {
        auto m = decode_module(read_bytes(dir / c.at("filename").get<std::string>()));
        validate_module(m);
        return "ok";
      } catch (const DecodeError& e) {
        return fmt::format("malformed: {} at byte {}", e.what(), e.offset());
      } catch (const ValidationError& e) {
        return std::string("invalid: ") + e.what();
      }
    };
    std::string why;
    bool validating = stage == SpecStage::kValidate;
    if (validating && type == "module" && module_type == "binary" && c.contains("filename")) {
      std::string r = check();
      if (r == "ok") ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("line {}: module should validate: {}", line, r));
      }
    } else if (validating && type == "assert_invalid" && module_type == "binary") {
      std::string r = check();
      if (r.rfind("invalid", 0) == 0) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("line {}: expected invalid (\"{}\"), got {}", line, c.value("text", ""), r));
      }
    } else if (type == "module" && module_type == "binary" && c.contains("filename")) {
      if (decodes(why)) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("line {}: module should decode: {}", line, why));
      }
    } else if (type == "assert_malformed" && module_type == "binary") {
      if (!decodes(why)) ++res.passed;
      else {
        ++res.failed;
        res.failures.push_back(fmt::format("line {}: accepted a malformed module (expected \"{}\")", line, c.value("text", "")));
      }
    } else if (module_type == "text") {
      ++res.skipped["text-format module (not a binary test)"];
    } else if (type == "assert_invalid" || type == "assert_unlinkable" || type == "assert_uninstantiable") {
      ++res.skipped["needs the validator/linker (" + type + ")"];
    } else {
      ++res.skipped["needs execution (" + type + ")"];
    }
  }
  fs::remove_all(dir);
  return res;
}

}  // namespace dlab::wasm
