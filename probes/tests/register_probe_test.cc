// The analysers on hand-written snippets, then the real probes: the table the tool measures must
// reproduce well-known ABI facts. Nothing here is known to the tool itself; the numbers come from
// clang's output for each target.
#include "dispatchlab/probes/register_probe.h"

#include <gtest/gtest.h>

#include "dispatchlab/probes/clang_runner.h"
#include "dispatchlab/probes/probe_report.h"
#include "dispatchlab/probes/signature.h"

namespace dlab::probes {
namespace {

const char* kMir = R"(--- |
  ; ModuleID = 'x'
...
---
name:            probe_other
liveins:
  - { reg: '$rdi', virtual-reg: '%0' }
...
---
name:            probe_all
alignment:       16
liveins:
  - { reg: '$rcx', virtual-reg: '%0' }
  - { reg: '$xmm1', virtual-reg: '%1' }
frameInfo:
  maxAlignment:    8
fixedStack:
  - { id: 0, type: default, offset: 48, size: 8, alignment: 16, stack-id: default,
      isImmutable: true, isAliased: false, callee-saved-register: '' }
  - { id: 1, type: default, offset: 40, size: 8, alignment: 8, stack-id: default,
      isImmutable: true, isAliased: false, callee-saved-register: '' }
stack:           []
body:             |
  bb.0.entry:
...
)";

TEST(MirAnalysis, ReadsLiveInsAndFixedStackOfOneFunction) {
  auto f = parse_mir_function(kMir, "probe_all");
  ASSERT_TRUE(f.found);
  EXPECT_EQ(f.liveins, (std::vector<std::string>{"rcx", "xmm1"}));
  EXPECT_EQ(f.fixed_stack_objects, 2);
  EXPECT_FALSE(parse_mir_function(kMir, "missing").found);
  EXPECT_EQ(parse_mir_function(kMir, "probe_other").liveins.size(), 1u);
}

TEST(AsmMethod, LocatesTheReturnedArgument) {
  // x86-64 SysV: the 7th integer argument is on the stack; the 6th in r9.
  EXPECT_FALSE(locate_returned_arg("x86_64", ArgType::kI64, {"movq\t8(%rsp), %rax", "retq"}).in_register);
  auto r9 = locate_returned_arg("x86_64", ArgType::kI64, {"movq\t%r9, %rax", "retq"});
  EXPECT_TRUE(r9.in_register);
  EXPECT_EQ(r9.where, "r9");
  // Already in the return register: no instruction writes it.
  EXPECT_EQ(locate_returned_arg("x86_64", ArgType::kF64, {"retq"}).where, "xmm0");
  // arm64: destination first; Darwin keeps a frame pointer, which is not the argument.
  auto d3 = locate_returned_arg("aarch64", ArgType::kF64, {"fmov\td0, d3", "ret"});
  EXPECT_TRUE(d3.in_register);
  EXPECT_EQ(d3.where, "d3");
  EXPECT_FALSE(locate_returned_arg("aarch64", ArgType::kI64,
                                   {"stp\tx29, x30, [sp, #-16]!", "mov\tx29, sp", "ldr\tx0, [x29, #16]", "ldp\tx29, x30, [sp], #16", "ret"})
                   .in_register);
  EXPECT_FALSE(locate_returned_arg("riscv64", ArgType::kI64, {"ld\ta0, 16(sp)", "ret"}).in_register);
  EXPECT_EQ(locate_returned_arg("riscv64", ArgType::kF64, {"fmv.d.x\tfa0, a0", "ret"}).where, "a0");
}

int in_regs(const std::string& triple, const std::string& conv, const std::string& shape_name, bool floats) {
  auto r = probe(triple, conv, shape(shape_name, shape_name == "mixed" ? 12 : 24));
  EXPECT_EQ(r.status, "ok") << triple << " " << conv << ": " << r.note;
  EXPECT_TRUE(r.methods_agree) << triple << " " << conv << ": " << r.note;
  return r.in_registers(floats);
}

TEST(RegisterBudget, ReproducesWellKnownAbiFacts) {
  // System V x86-64: 6 integer and 8 float registers.
  EXPECT_EQ(in_regs("x86_64-linux-gnu", "default", "ints", false), 6);
  EXPECT_EQ(in_regs("x86_64-linux-gnu", "default", "floats", true), 8);
  // AAPCS64: 8 and 8.
  EXPECT_EQ(in_regs("aarch64-linux-gnu", "default", "ints", false), 8);
  EXPECT_EQ(in_regs("aarch64-linux-gnu", "default", "floats", true), 8);
  // Windows x64: 4 positional slots shared by both kinds.
  EXPECT_EQ(in_regs("x86_64-pc-windows-msvc", "default", "ints", false), 4);
  EXPECT_EQ(in_regs("x86_64-pc-windows-msvc", "default", "mixed", false) +
                in_regs("x86_64-pc-windows-msvc", "default", "mixed", true),
            4);
  // preserve_none widens the integer budget.
  EXPECT_GT(in_regs("x86_64-linux-gnu", "preserve_none", "ints", false), 6);
  EXPECT_GT(in_regs("aarch64-linux-gnu", "preserve_none", "ints", false), 8);
}

TEST(RegisterBudget, ArgumentsPassedByReferenceAreNeitherRegisterNorStack) {
  // Windows regcall has 16 float registers; further doubles are passed by reference.
  auto r = probe("x86_64-pc-windows-msvc", "regcall", shape("floats", 20));
  ASSERT_EQ(r.status, "ok") << r.note;
  EXPECT_EQ(r.in_registers(true), 16);
  EXPECT_EQ(r.indirect(), 4);
  EXPECT_EQ(r.on_stack(), 0);
  EXPECT_TRUE(r.methods_agree) << r.note;
  EXPECT_NE(r.register_list().find("&"), std::string::npos);
}

TEST(RegisterBudget, ConventionsATargetIgnoresAreReportedAsIgnored) {
  auto r = probe("riscv64-linux-gnu", "preserve_none", shape("ints", 4));
  EXPECT_EQ(r.status, "ignored");
  EXPECT_NE(r.note.find("preserve_none"), std::string::npos);
  EXPECT_THROW(convention_attribute("fastest"), std::invalid_argument);
}

TEST(Fit, FiveAndSixArgumentHandlersSpillOnWindowsX64UnlessSysV) {
  auto sig = parse_signature("ptr,ptr,u64,u64,u32,u32");
  auto win = probe("x86_64-pc-windows-msvc", "default", sig);
  EXPECT_EQ(win.on_stack(), 2);
  EXPECT_FALSE(win.args[4].in_register);
  EXPECT_EQ(probe("x86_64-pc-windows-msvc", "sysv_abi", sig).on_stack(), 0);
  EXPECT_EQ(probe("aarch64-pc-windows-msvc", "default", sig).on_stack(), 0);
  EXPECT_THROW(parse_signature("ptr,bool"), std::invalid_argument);
}

}  // namespace
}  // namespace dlab::probes

namespace dlab::probes {
namespace {

TEST(RegisterBudget, AFailureInAWorkerThreadReachesTheCaller) {
  // An unknown convention throws inside the worker threads; it must come back as an exception
  // on this thread (it used to abort the process: "terminate called recursively").
  EXPECT_THROW(run_register_budget({"x86_64-linux-gnu", "aarch64-linux-gnu"}, {"no_such_convention"}, 4), std::exception);
}

TEST(Signature, HasALimit) {
  EXPECT_EQ(parse_signature("u64,u64").size(), 2u);
  std::string many = "u64";
  for (size_t i = 1; i <= kMaxProbeArguments; ++i) many += ",u64";
  EXPECT_THROW(parse_signature(many), std::invalid_argument);
}

}  // namespace
}  // namespace dlab::probes
