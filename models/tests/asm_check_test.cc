#include "asm_check.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace dlab::models {
namespace {

const char* kGoodX86 = R"(	.type	_ZL5h_u_0P6DlExecPK6DlInstmm,@function
_ZL5h_u_0P6DlExecPK6DlInstmm:
	.cfi_startproc
	movq	(%rdi), %rax
	addq	$1, %rax
	jmpq	*(%rcx,%rax,8)                  # TAILCALL
.Lfunc_end0:
	.type	_ZL6h_exitP6DlExecPK6DlInstmm,@function
_ZL6h_exitP6DlExecPK6DlInstmm:
	xorl	%eax, %eax
	retq
.Lfunc_end1:
)";

TEST(AsmCheck, AcceptsTailJumpingHandlers) {
  int seen = 0;
  EXPECT_TRUE(check_tail_handlers(kGoodX86, "x86_64", &seen).empty());
  EXPECT_EQ(seen, 2);
  auto fns = parse_asm_functions(kGoodX86);
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].instructions.size(), 3u);
  EXPECT_EQ(fns[0].instructions.back(), "jmpq	*(%rcx,%rax,8)");
}

TEST(AsmCheck, RejectsCallsAndReturnsInHandlers) {
  std::string bad = R"(	.type	h_u_3,@function
h_u_3:
	callq	*(%rcx,%rax,8)
	retq
.Lfunc_end3:
)";
  auto p = check_tail_handlers(bad, "x86_64");
  ASSERT_EQ(p.size(), 3u);  // a call, a return, and no final jump
}

TEST(AsmCheck, Arm64BranchesAndLinks) {
  std::string good = "\t.type\th_b_1,%function\nh_b_1:\n\tldr\tx8, [x0]\n\tbr\tx8\n.Lfunc_end2:\n";
  EXPECT_TRUE(check_tail_handlers(good, "aarch64").empty());
  std::string bad = "\t.type\th_b_1,%function\nh_b_1:\n\tblr\tx8\n\tb\t.LBB0_1\n.Lfunc_end2:\n";
  EXPECT_EQ(check_tail_handlers(bad, "aarch64").size(), 1u);
}

// The generated tail-call handler files, compiled with -S for x86-64 and arm64 by CMake.
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
    EXPECT_GT(seen, 100) << name;
    ++files;
  }
  EXPECT_GE(files, 30);
}

}  // namespace
}  // namespace dlab::models
