// Every generated tail-call handler file, compiled with -S for x86-64 and arm64 by CMake, has
// handlers that end in a jump with no call; only the exit handler returns.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "dispatchlab/probes/asm_analysis.h"

namespace dlab::probes {
namespace {

TEST(AsmCheck, GeneratedHandlersTailCallOnBothTargets) {
  namespace fs = std::filesystem;
  int files = 0;
  for (const auto& e : fs::directory_iterator(DLAB_MODELS_ASM_DIR)) {
    std::string name = e.path().filename().string();
    std::string arch = name.find(".aarch64.") != std::string::npos ? "aarch64" : "x86_64";
    std::ifstream in(e.path());
    std::stringstream ss;
    ss << in.rdbuf();
    int seen = 0;
    auto problems = check_tail_handlers(ss.str(), arch, &seen);
    for (const auto& p : problems) ADD_FAILURE() << name << ": " << p;
    EXPECT_GT(seen, name.rfind("stack1_", 0) == 0 ? 10 : 100) << name;  // stack1: one copy of each of 10 kinds
    ++files;
  }
  EXPECT_GE(files, 78);  // 39 tail-call files (tail and tail_pn) x 2 targets
}

}  // namespace
}  // namespace dlab::probes
