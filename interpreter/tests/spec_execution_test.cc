// The spec runner's hostile inputs (reliability pass 4): actions on exports of the wrong kind or
// with the wrong arguments are failures at their line and the script goes on; reference results
// are printed as the spec's scripts write them, never as addresses. (The reader's nesting and size
// limits: sexpr_test.cc.)
#include <gtest/gtest.h>

#include "dispatchlab/interpreter/reference_text.h"
#include "dispatchlab/interpreter/types.h"
#include "spec/sexpr.h"
#include "spec/spec_execution.h"
#include "spec/spec_script.h"

namespace dlab::wasm {
namespace {

// (module (func (export "f") (result i32) i32.const 42) (memory (export "mem") 1)
//         (global (export "g") i32 (i32.const 7)))
const char* kKinds =
    "(module binary \"\\00asm\\01\\00\\00\\00\" \"\\01\\05\\01\\60\\00\\01\\7f\" \"\\03\\02\\01\\00\" \"\\05\\03\\01\\00\\01\" "
    "\"\\06\\06\\01\\7f\\00\\41\\07\\0b\" \"\\07\\0f\\03\\01f\\00\\00\\01g\\03\\00\\03mem\\02\\00\" \"\\0a\\06\\01\\04\\00\\41\\2a\\0b\")\n";

SpecFileResult run(const std::string& script) {
  ScriptModules modules;
  nlohmann::json doc = translate_script(sexpr::parse(script, "k.bin.wast"), "k.bin.wast", modules);
  SpecFileResult res;
  res.file = "k.bin.wast";
  execute_commands(doc, modules, EngineConfig{}, res);
  return res;
}

TEST(SpecExecution, AnActionOnAnExportOfAnotherKindFailsAtItsLineAndTheScriptGoesOn) {
  SpecFileResult res = run(std::string(kKinds) +
                           "(assert_return (get \"f\") (i32.const 42))\n"
                           "(assert_return (invoke \"g\") (i32.const 7))\n"
                           "(invoke \"mem\")\n"
                           "(assert_return (invoke \"f\") (i32.const 42))\n"
                           "(assert_return (get \"g\") (i32.const 7))\n");
  EXPECT_EQ(res.passed, 3);  // the module, and the two right ones after the wrong ones
  ASSERT_EQ(res.failures.size(), 3u);
  EXPECT_EQ(res.failures[0], "k.bin.wast:2: export f is a function, not a global");
  EXPECT_EQ(res.failures[1], "k.bin.wast:3: export g is a global, not a function");
  EXPECT_EQ(res.failures[2], "k.bin.wast:4: export mem is a memory, not a function");
}

TEST(SpecExecution, WrongArgumentsAreAFailureAtTheirLineNotAnAbort) {
  SpecFileResult res = run(std::string(kKinds) +
                           "(assert_return (invoke \"f\" (i32.const 1) (i32.const 2)) (i32.const 42))\n"
                           "(assert_return (invoke \"f\") (i32.const 42))\n");
  EXPECT_EQ(res.passed, 2);
  ASSERT_EQ(res.failures.size(), 1u);
  EXPECT_EQ(res.failures[0], "k.bin.wast:2: f: expected 0 arguments, got 2");
}

TEST(SpecExecution, AReferenceResultIsPrintedAsTheSpecWritesItNeverAsAnAddress) {
  // n returns a null externref; the script expects (ref.extern 1): the failure shows what came.
  const char* module_n =
      "(module binary \"\\00asm\\01\\00\\00\\00\" \"\\01\\05\\01\\60\\00\\01\\6f\" \"\\03\\02\\01\\00\" "
      "\"\\07\\05\\01\\01n\\00\\00\" \"\\0a\\06\\01\\04\\00\\d0\\6f\\0b\")\n";
  SpecFileResult res = run(std::string(module_n) + "(assert_return (invoke \"n\") (ref.extern 1))\n");
  ASSERT_EQ(res.failures.size(), 1u);
  EXPECT_NE(res.failures[0].find("got ref.null"), std::string::npos) << res.failures[0];

  FuncInst f;
  EXPECT_EQ(reference_text(Value{ValType::kFuncRef, reinterpret_cast<uint64_t>(&f), 0}, nullptr), "ref.func");
  EXPECT_EQ(reference_text(Value{ValType::kExternRef, ref::host(5), 0}, nullptr), "ref.extern 5");
  EXPECT_EQ(reference_text(Value{ref_type(true, kHeapAny), ref::host(3), 0}, nullptr), "ref.host 3");
  EXPECT_EQ(reference_text(Value{ref_type(true, kHeapI31), ref::i31(0x7FFFFFFF), 0}, nullptr), "ref.i31 2147483647");
  EXPECT_EQ(reference_text(Value{ref_type(true, kHeapExn), 0x1000, 0}, nullptr), "ref.exn");
  Rtt array_rtt;
  array_rtt.kind = TypeKind::kArray;
  alignas(8) GcObject object{&array_rtt, 0, 0};
  EXPECT_EQ(reference_text(Value{ref_type(true, kHeapAny), reinterpret_cast<uint64_t>(&object), 0}, nullptr), "ref.array");
  EXPECT_EQ(reference_text(Value{ValType::kExternRef, reinterpret_cast<uint64_t>(&object), 0}, nullptr), "ref.extern (ref.array)");
  EXPECT_EQ(reference_text(Value{ref_type(true, kHeapEq), 0, 0}, nullptr), "ref.null");
}

}  // namespace
}  // namespace dlab::wasm
