#include "dispatchlab/probes/clang_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/process.h"
#include "dispatchlab/harness/temp_dir.h"

namespace dlab::probes {

namespace fs = std::filesystem;


CompileResult compile_file(const std::string& path, const std::string& triple, Output what,
                           const std::vector<std::string>& extra_flags) {
  TempDir scratch("probe");
  fs::path out = scratch.file(what == Output::kAsm ? "out.s" : "out.mir"), err = scratch.file("clang.err");
  std::vector<std::string> cmd = {DLAB_CLANG, "--target=" + triple, "-std=c++20", "-O2", "-S", "-x", "c++", path};
  if (what == Output::kMir) cmd.insert(cmd.end(), {"-mllvm", "-stop-after=finalize-isel"});
  cmd.insert(cmd.end(), extra_flags.begin(), extra_flags.end());
  cmd.insert(cmd.end(), {"-o", out.string()});
  ProcessOptions po;
  po.stderr_file = err.string();
  ProcessResult rc = run_process(cmd, po);
  CompileResult r;
  r.exit_code = rc.exit_code;
  r.output = read_text_file(out.string());
  r.diagnostics = rc.spawn_error.empty() ? read_text_file(err.string()) : rc.describe(DLAB_CLANG);
  return r;
}

CompileResult compile(const std::string& source, const std::string& triple, Output what,
                      const std::vector<std::string>& extra_flags) {
  TempDir scratch("probe-src");
  fs::path src = scratch.write("probe.cc", source);
  return compile_file(src.string(), triple, what, extra_flags);
}

std::string ignored_convention_warning(const std::string& diagnostics) {
  std::istringstream in(diagnostics);
  std::string line;
  while (std::getline(in, line))
    if (line.find("calling convention is not supported for this target") != std::string::npos ||
        (line.find("unknown attribute") != std::string::npos && line.find("ignored") != std::string::npos)) {
      auto w = line.find("warning: ");
      return w == std::string::npos ? line : line.substr(w + 9);
    }
  return "";
}

std::string convention_attribute(const std::string& c) {
  if (c == "default") return "";
  if (c == "preserve_none" || c == "preserve_most" || c == "ms_abi" || c == "sysv_abi" || c == "regcall")
    return "__attribute__((" + c + "))";
  throw std::invalid_argument("unknown calling convention '" + c + "'");
}

const std::vector<std::string>& all_conventions() {
  static const std::vector<std::string> c = {"default", "preserve_none", "preserve_most", "ms_abi", "sysv_abi", "regcall"};
  return c;
}

const std::vector<std::string>& all_targets() {
  static const std::vector<std::string> t = {"x86_64-linux-gnu",        "x86_64-apple-darwin",    "x86_64-pc-windows-msvc",
                                             "aarch64-linux-gnu",       "arm64-apple-ios",        "arm64_32-apple-watchos",
                                             "aarch64-pc-windows-msvc", "riscv64-linux-gnu"};
  return t;
}

}  // namespace dlab::probes
