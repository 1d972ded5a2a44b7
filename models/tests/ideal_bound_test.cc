// The ideal bound's input: objdump's disassembly turned into assembly llvm-mca accepts (checked
// against llvm-mca itself by `dlab models --predict`'s end-to-end test), and the handler names it
// finds the code by.
#include "dispatchlab/models/ideal_bound.h"

#include <gtest/gtest.h>

#include <sstream>

#include "dispatchlab/models/handler_name.h"

namespace dlab::models {
namespace {

TEST(IdealBound, ObjdumpLinesBecomeInstructionsLlvmMcaReads) {
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
  EXPECT_EQ(mca_assembly(predictors::read_objdump_lines(in)),
            "test   %rcx,%rcx\n"
            "je     0x1d5ece\n"
            "lea    0x239e94(%rip),%r8\n"
            "jmp    *(%r8,%rax,8)\n"
            "call   0x1100\n"
            "ret\n");
}

TEST(IdealBound, HandlerNamesAreTheGeneratorsUpperCaseKindsMarked) {
  EXPECT_EQ(handler_name("u", 0), "h_u_0");
  EXPECT_EQ(handler_name("S", 3), "h_xS_3");  // s and S stay apart in every symbol reader
  EXPECT_EQ(handler_name("s", 3), "h_s_3");
}

}  // namespace
}  // namespace dlab::models
