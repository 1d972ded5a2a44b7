#include "dispatchlab/probes/asm_analysis.h"

#include <gtest/gtest.h>

namespace dlab::probes {
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

TEST(AsmAnalysis, MachOAndCoffFunctionsAndStackOperands) {
  std::string macho = "_probe_3:\n\t.cfi_startproc\n\tldr\tx0, [sp, #16]\n\tret\nLfunc_end3:\n_probe_4:\n\tret\n";
  auto fns = parse_asm_functions(macho);
  ASSERT_EQ(fns.size(), 2u);
  ASSERT_NE(find_function(fns, "probe_3"), nullptr);
  EXPECT_EQ(find_function(fns, "probe_3")->instructions.size(), 2u);
  EXPECT_TRUE(touches_stack("aarch64", "ldr\tx0, [sp, #16]"));
  EXPECT_FALSE(touches_stack("aarch64", "mov\tx0, x7"));
  std::string coff = "\t.def\tprobe_0;\n\t.scl\t2;\n\t.endef\nprobe_0:\n\tmovq\t40(%rsp), %rax\n\tretq\n\t.seh_endproc\n";
  auto c = parse_asm_functions(coff);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].instructions.size(), 2u);
  EXPECT_TRUE(touches_stack("x86_64", c[0].instructions[0]));
  EXPECT_TRUE(touches_stack("riscv64", "ld\ta0, 16(sp)"));
  EXPECT_EQ(arch_of_triple("arm64_32-apple-watchos"), "aarch64");
  EXPECT_EQ(arch_of_triple("x86_64-pc-windows-msvc"), "x86_64");
}

}  // namespace
}  // namespace dlab::probes
