// Runs clang-19 on generated source for a target triple: assembly (`-S`) or machine IR after
// instruction selection (`-mllvm -stop-after=finalize-isel`). No sysroot is needed: the sources
// include no headers.
#pragma once

#include <string>
#include <vector>

namespace dlab::probes {

enum class Output { kAsm, kMir };

struct CompileResult {
  int exit_code = -1;
  std::string output;       // the .s or .mir text
  std::string diagnostics;  // clang's stderr
  bool ok() const { return exit_code == 0; }
};

CompileResult compile(const std::string& source, const std::string& triple, Output what,
                      const std::vector<std::string>& extra_flags = {});
CompileResult compile_file(const std::string& path, const std::string& triple, Output what,
                           const std::vector<std::string>& extra_flags = {});

// The clang warning that says a calling-convention attribute was ignored for this target, or "".
std::string ignored_convention_warning(const std::string& diagnostics);

// The attribute that selects a convention by name ("default" gives "").
std::string convention_attribute(const std::string& convention);  // throws std::invalid_argument
const std::vector<std::string>& all_conventions();
const std::vector<std::string>& all_targets();

}  // namespace dlab::probes
