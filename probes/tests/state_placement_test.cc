#include "dispatchlab/probes/state_placement.h"

#include <gtest/gtest.h>

#include "dispatchlab/probes/probe_report.h"

namespace dlab::probes {
namespace {

TEST(StatePlacement, CountsSavesStackAccessesAndTheTailJump) {
  std::string text = R"(	.type	_ZL5h_b_0P6DlExec,@function
_ZL5h_b_0P6DlExec:
	pushq	%rbx
	movq	16(%rsp), %rax
	movq	%rax, (%rdi)
	popq	%rbx
	jmpq	*%rcx
.Lfunc_end0:
)";
  auto r = analyse_placement(text, "x86_64", {"b", "c"});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, "ok");
  EXPECT_EQ(r[0].instructions, 5);
  EXPECT_EQ(r[0].callee_saved, 1);
  EXPECT_EQ(r[0].stack_accesses, 3);  // push, the stack-argument load, pop
  EXPECT_TRUE(r[0].tail_jump);
  EXPECT_EQ(r[1].status, "error");  // no h_c_0 in the text
  EXPECT_EQ(callee_saved_in("aarch64", "stp\tx19, x20, [sp, #-32]!"), 2);
  EXPECT_EQ(callee_saved_in("aarch64", "stp\tx0, x1, [sp, #16]"), 0);
  EXPECT_EQ(callee_saved_in("riscv64", "sd\ts0, 8(sp)"), 1);
}

double mean_stack(const std::vector<HandlerPlacement>& v) {
  double s = 0;
  for (const auto& h : v) s += h.stack_accesses;
  return s / static_cast<double>(v.size());
}

TEST(StatePlacement, TheModelsVariantsShowTheirStateInTheCode) {
  const auto& kinds = placement_kinds();
  auto sp = state_placement(DLAB_MODELS_DIR, "sp", "x86_64-linux-gnu", "default", kinds);
  auto spill = state_placement(DLAB_MODELS_DIR, "sp_spill", "x86_64-linux-gnu", "default", kinds);
  auto spill_pn = state_placement(DLAB_MODELS_DIR, "sp_spill", "x86_64-linux-gnu", "preserve_none", kinds);
  for (const auto* v : {&sp, &spill, &spill_pn})
    for (const auto& h : *v) {
      EXPECT_EQ(h.status, "ok") << h.placement << " " << h.kind << ": " << h.note;
      EXPECT_TRUE(h.tail_jump) << h.placement << " " << h.kind;
    }
  EXPECT_EQ(mean_stack(sp), 0);          // height and everything else in registers
  EXPECT_GT(mean_stack(spill), 1);       // the 9th argument lives on the stack
  EXPECT_LT(mean_stack(spill_pn), 0.5);  // preserve_none has the registers for it
  // Windows x64 has 4 argument registers: the write-through top (5th argument) is spilled.
  auto wt_win = state_placement(DLAB_MODELS_DIR, "sp_wt_nr_sl", "x86_64-pc-windows-msvc", "default", kinds);
  auto wt_win_sysv = state_placement(DLAB_MODELS_DIR, "sp_wt_nr_sl", "x86_64-pc-windows-msvc", "sysv_abi", kinds);
  EXPECT_GT(mean_stack(wt_win), mean_stack(wt_win_sysv));
  // arm64's eight argument registers hold every placement but sp_spill.
  EXPECT_EQ(mean_stack(state_placement(DLAB_MODELS_DIR, "tos_flag", "aarch64-linux-gnu", "default", kinds)), 0);
  // A target that cannot honour musttail with stack arguments says so.
  auto rv = state_placement(DLAB_MODELS_DIR, "sp_spill", "riscv64-linux-gnu", "default", kinds);
  EXPECT_EQ(rv.front().status, "error");
  EXPECT_NE(rv.front().note.find("tail call"), std::string::npos);
}

}  // namespace
}  // namespace dlab::probes
