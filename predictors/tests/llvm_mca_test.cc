// The ideal bound's input: objdump's disassembly turned into assembly llvm-mca accepts (checked
// against llvm-mca itself by the end-to-end tests of `dlab models --predict` and `dlab wasm bench
// --predict`), and the path of a function a trace saw run.
#include "dispatchlab/predictors/llvm_mca.h"

#include <gtest/gtest.h>

#include <sstream>

namespace dlab::predictors {
namespace {

TEST(LlvmMca, ObjdumpLinesBecomeInstructionsLlvmMcaReads) {
  const std::string objdump =
      "00000000001d5ec0 <_ZL6h_exitP6DlExecPK6DlInstmm>:\n"
      "  1d5ec0:\ttest   %rcx,%rcx\n"
      "  1d5ec3:\tje     1d5ece <_ZL6h_exitP6DlExecPK6DlInstmm+0xe>\n"
      "  1c9eb5:\tlea    0x239e94(%rip),%r8        # 403d50 <_ZL8dl_table>\n"
      "  1c9ebc:\tjmp    *(%r8,%rax,8)\n"
      "  1c9ec1:\tcall   1100 <h>\n"
      "  1c9f11:\tdata16 data16 cs nopw 0x0(%rax,%rax,1)\n"
      "  1c9f20:\tnopl   0x0(%rax)\n"
      "  1d5eda:\tint3\n"
      "  1d5ecd:\tret\n";
  std::istringstream in(objdump);
  EXPECT_EQ(mca_assembly(read_objdump_lines(in)),
            "test   %rcx,%rcx\n"
            "je     0x1d5ece\n"
            "lea    0x239e94(%rip),%r8\n"
            "jmp    *(%r8,%rax,8)\n"
            "call   0x1100\n"
            "ret\n");
}

TEST(LlvmMca, PushAndPopAreStoresAndLoadsAtTheStackEnginesOffset) {
  std::vector<ObjdumpLine> lines{{0, "push   %rbp"},          {1, "push   %r15"},           {2, "sub    $0x18,%rsp"},
                                 {3, "mov    %rax,0x8(%rsp)"}, {4, "mov    (%rsp,%rcx,8),%rdx"}, {5, "lea    -0x8(%rsp),%rsi"},
                                 {6, "add    $0x18,%rsp"},     {7, "pop    %r15"},           {8, "pop    %rbp"},
                                 {9, "mov    0x10(%rsp),%rax"}, {10, "jmp    *%rax"}};
  EXPECT_EQ(mca_assembly(lines),
            "mov    %rbp,-0x8(%rsp)\n"
            "mov    %r15,-0x10(%rsp)\n"
            "mov    %rax,-0x20(%rsp)\n"   // 0x8 below the 0x28 pushed and subtracted
            "mov    -0x28(%rsp,%rcx,8),%rdx\n"
            "lea    -0x30(%rsp),%rsi\n"
            "mov    -0x10(%rsp),%r15\n"
            "mov    -0x8(%rsp),%rbp\n"
            "mov    0x10(%rsp),%rax\n"    // balanced again: as it was
            "jmp    *%rax\n");
}

TEST(LlvmMca, AnRspWriteItCannotFollowLeavesTheRestAsItIs) {
  // After a push of an immediate the offset is unknown: from that line on, nothing is moved.
  std::vector<ObjdumpLine> lines{{0, "push   %rbp"}, {1, "push   $0x0"}, {2, "mov    0x8(%rsp),%rax"}, {3, "pop    %rbx"}};
  EXPECT_EQ(mca_assembly(lines),
            "mov    %rbp,-0x8(%rsp)\n"
            "push   $0x0\n"
            "mov    0x8(%rsp),%rax\n"
            "pop    %rbx\n");
  for (const char* write : {"lea    -0x8(%rsp),%rsp", "and    $0xfffffffffffffff0,%rsp", "mov    %rbp,%rsp", "leave", "pushf"}) {
    std::vector<ObjdumpLine> l{{0, "push   %rbp"}, {1, write}, {2, "pop    %rbp"}};
    EXPECT_EQ(mca_assembly(l), std::string("mov    %rbp,-0x8(%rsp)\n") + write + "\npop    %rbp\n") << write;
  }
}

std::vector<ObjdumpLine> handler() {
  // entry, a check, its cold trap call, the usual path, a two-instruction loop, the dispatch jump.
  return {{0x100, "mov (%rdi),%eax"}, {0x102, "test %eax,%eax"}, {0x104, "je 0x120"}, {0x106, "add $1,%eax"},
          {0x109, "dec %ecx"},        {0x10b, "jne 0x109"},      {0x10d, "jmp *(%r8,%rax,8)"}, {0x120, "call 0x200"}};
}

TEST(LlvmMca, HotPathKeepsWhatRanAtLeastHalfAsOftenAsTheEntry) {
  const uint64_t offset = 0x1000;  // trace addresses are the binary's plus the load offset
  std::unordered_map<uint64_t, uint64_t> ran{{0x1100, 10}, {0x1102, 10}, {0x1104, 10}, {0x1106, 9},
                                             {0x1109, 30}, {0x110b, 30}, {0x110d, 9},  {0x1120, 1}};
  HotPath p = hot_path(handler(), ran, offset);
  EXPECT_EQ(p.entries, 10u);
  EXPECT_EQ(p.executions, 109u);
  std::vector<uint64_t> kept;
  for (const ObjdumpLine& l : p.lines) kept.push_back(l.address);
  // the trap call (1 of 10) drops out; the loop stays, once.
  EXPECT_EQ(kept, (std::vector<uint64_t>{0x100, 0x102, 0x104, 0x106, 0x109, 0x10b, 0x10d}));
}

TEST(LlvmMca, HotPathOfAFunctionNeverEnteredIsEmpty) {
  // Its instructions ran (reached by a jump into its middle, or at another load offset) but its
  // entry never did: no path, however often the rest ran.
  std::unordered_map<uint64_t, uint64_t> ran{{0x106, 5}, {0x10d, 5}};
  HotPath p = hot_path(handler(), ran, 0);
  EXPECT_EQ(p.entries, 0u);
  EXPECT_EQ(p.executions, 10u);
  EXPECT_TRUE(p.lines.empty());
  EXPECT_TRUE(hot_path({}, ran, 0).lines.empty());
}

}  // namespace
}  // namespace dlab::predictors
