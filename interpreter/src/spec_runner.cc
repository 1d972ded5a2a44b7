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

SpecFileResult run_spec_file(const std::string& wast_path) {
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
    std::string why;
    if (type == "module" && module_type == "binary" && c.contains("filename")) {
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
