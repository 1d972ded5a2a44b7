// The .bin.wast reader (sexpr.h) and the translator into the spec runner's command model
// (spec_script.h), checked end to end on a tiny script run by execute_commands().
#include "spec/sexpr.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "spec/spec_execution.h"
#include "spec/spec_script.h"

namespace dlab::wasm {
namespace {

namespace fs = std::filesystem;
using sexpr::Node;

std::string parse_error(const std::string& text) {
  try {
    sexpr::parse(text, "t.wast");
  } catch (const sexpr::ParseError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Sexpr, StringEscapes) {
  auto nodes = sexpr::parse(R"("\00\ff\7F\n\t\r\"\'\\ \u{48}\u{e9}\u{1F600}")", "t.wast");
  ASSERT_EQ(nodes.size(), 1u);
  ASSERT_TRUE(nodes[0].is_string());
  EXPECT_EQ(nodes[0].text, std::string("\x00\xff\x7f\n\t\r\"'\\ H\xc3\xa9\xf0\x9f\x98\x80", 17));
}

TEST(Sexpr, NestingAtomsAndLines) {
  auto nodes = sexpr::parse("(module binary \"\\00asm\"\n  \"x\")\n;; a comment\n(; block (; nested ;) ;)\n"
                            "(assert_return (invoke $M \"f\" (i32.const -0x1_0)) (f32.const nan:canonical))",
                            "t.wast");
  ASSERT_EQ(nodes.size(), 2u);
  const Node& m = nodes[0];
  EXPECT_TRUE(m.is_list());
  EXPECT_EQ(m.head(), "module");
  EXPECT_EQ(m.line, 1);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_TRUE(m[1].is_atom("binary"));
  EXPECT_EQ(m[2].text, std::string("\0asm", 4));
  EXPECT_EQ(m[3].line, 2);
  const Node& a = nodes[1];
  EXPECT_EQ(a.line, 5);
  EXPECT_EQ(a[1].head(), "invoke");
  EXPECT_TRUE(a[1][1].is_symbol());
  EXPECT_EQ(a[1][3][1].text, "-0x1_0");
  EXPECT_EQ(a[2][1].text, "nan:canonical");
}

TEST(Sexpr, ErrorsSayFileAndLine) {
  EXPECT_EQ(parse_error("(module\n  (func)\n"), "t.wast:1: unclosed '(' (end of file)");
  EXPECT_EQ(parse_error("\n\n)"), "t.wast:3: unexpected ')'");
  EXPECT_EQ(parse_error("(a\n \"\\zz\")"), "t.wast:2: malformed escape '\\z' in a string");
  EXPECT_EQ(parse_error("\"abc"), "t.wast:1: unterminated string");
  EXPECT_EQ(parse_error("\n(; open"), "t.wast:2: unterminated block comment");
  EXPECT_EQ(parse_error("\"\\u{d800}\""), "t.wast:1: \\u escape is a surrogate");
}

TEST(Sexpr, NestingDeeperThanTheLimitIsAnErrorAtItsLineAtAnyDepth) {
  std::string ok = std::string(sexpr::kMaxNesting, '(') + std::string(sexpr::kMaxNesting, ')');
  EXPECT_EQ(sexpr::parse(ok, "t.wast").size(), 1u);
  std::string deeper = "\n" + std::string(sexpr::kMaxNesting + 1, '(') + std::string(sexpr::kMaxNesting + 1, ')');
  EXPECT_EQ(parse_error(deeper), "t.wast:2: lists nested deeper than 1000");
  EXPECT_EQ(parse_error(std::string(50000, '(') + std::string(50000, ')')), "t.wast:1: lists nested deeper than 1000");
  EXPECT_EQ(parse_error(std::string(300000, '(')), "t.wast:1: lists nested deeper than 1000");
}

TEST(Sexpr, ATreeOfAnyDepthIsFreedWithoutRecursion) {
  // Built by hand past the reader's limit: a recursive destructor overflows the stack here.
  sexpr::Node root;
  root.kind = sexpr::Node::kList;
  sexpr::Node* at = &root;
  for (int i = 0; i < 1'000'000; ++i) {
    at->items.emplace_back();
    at = &at->items.back();
    at->kind = sexpr::Node::kList;
  }
  root = sexpr::Node();  // the old tree is destroyed here
  EXPECT_TRUE(root.items.empty());
}

TEST(Sexpr, AScriptLargerThanTheLimitIsRefusedBeforeItIsRead) {
  fs::path big = fs::temp_directory_path() / ("dlab-big-script-" + std::to_string(getpid()) + ".bin.wast");
  std::ofstream(big).put('(');
  fs::resize_file(big, sexpr::kMaxScriptBytes + 1);  // sparse: no disk or memory used
  try {
    sexpr::parse_file(big.string());
    ADD_FAILURE() << "read a script over the limit";
  } catch (const sexpr::ParseError& e) {
    EXPECT_EQ(std::string(e.what()), fmt::format("{}: {} bytes: larger than a script may be (256 MiB)", big.string(), sexpr::kMaxScriptBytes + 1));
  }
  fs::remove(big);
}

TEST(SpecScript, ALongLiteralIsQuotedShortened) {
  ScriptModules modules;
  try {
    translate_script(sexpr::parse("(assert_return (invoke \"f\") (i32.const 1" + std::string(100000, '0') + "))", "t.wast"), "t.wast", modules);
    ADD_FAILURE() << "a 100,001-digit i32 was accepted";
  } catch (const ScriptError& e) {
    EXPECT_EQ(std::string(e.what()), "t.wast:1: integer out of range: 1000000000000000000000000000000000000000... (100001 characters)");
  }
}

TEST(SpecScript, Literals) {
  EXPECT_EQ(parse_int_literal("0xffff_ffff", 32), 0xffffffffu);
  EXPECT_EQ(parse_int_literal("-1", 32), 0xffffffffu);
  EXPECT_EQ(parse_int_literal("-0x8000000000000000", 64), 0x8000000000000000ull);
  EXPECT_EQ(parse_int_literal("-128", 8), 0x80u);
  EXPECT_THROW(parse_int_literal("0x1_0000_0000", 32), std::invalid_argument);
  EXPECT_EQ(parse_float_literal("-0x0p+0", 32, false), "2147483648");
  EXPECT_EQ(parse_float_literal("0x1.8p+1", 64, false), std::to_string(0x4008000000000000ull));
  EXPECT_EQ(parse_float_literal("1e10", 32, false), std::to_string(0x501502f9u));
  EXPECT_EQ(parse_float_literal("-inf", 32, false), std::to_string(0xff800000u));
  EXPECT_EQ(parse_float_literal("nan:0x200000", 32, false), std::to_string(0x7fa00000u));
  EXPECT_EQ(parse_float_literal("-nan", 64, false), std::to_string(0xfff8000000000000ull));
  EXPECT_EQ(parse_float_literal("nan:arithmetic", 32, true), "nan:arithmetic");
  EXPECT_THROW(parse_float_literal("nan:canonical", 32, false), std::invalid_argument);
}

// A module exporting f: [] -> [i32] (42) and n: [] -> [externref] (null).
const char* kModule =
    "\"\\00asm\\01\\00\\00\\00\" \"\\01\\09\\02\\60\\00\\01\\7f\\60\\00\\01\\6f\" \"\\03\\03\\02\\00\\01\" "
    "\"\\07\\09\\02\\01\\66\\00\\00\\01\\6e\\00\\01\" \"\\0a\\0b\\02\\04\\00\\41\\2a\\0b\\04\\00\\d0\\6f\\0b\"";

class TranslatedScript : public ::testing::Test {
 protected:
  nlohmann::json translate(const std::string& text) { return translate_script(sexpr::parse(text, "tiny.bin.wast"), "tiny.bin.wast", modules_); }
  ScriptModules modules_;  // in memory: no folder
};

TEST_F(TranslatedScript, RunsModuleInvokeAssertReturnEitherRefNull) {
  std::string script = std::string("(module definition $M binary ") + kModule + ")\n" +
                       "(module instance $I $M)\n"
                       "(assert_return (invoke $I \"f\") (i32.const 0x2a))\n"
                       "(assert_return (invoke \"f\") (either (i32.const 1) (i32.const 42)))\n"
                       "(assert_return (invoke \"n\") (ref.null extern))\n"
                       "(assert_return (invoke \"n\") (ref.null))\n"
                       "(invoke \"f\")\n"
                       "(assert_return (invoke \"f\") (either (i32.const 1) (i32.const 2)))\n"
                       "(assert_return (invoke \"n\") (ref.null any))\n"
                       "(assert_exception (invoke \"f\"))\n"
                       "(assert_malformed (module quote \"(module\") \"unexpected end\")\n"
                       "(module definition binary \"\\00asm\\01\\00\\00\\00\" \"\\05\\03\\01\\04\\01\")\n";
  nlohmann::json doc = translate(script);
  const auto& cmds = doc.at("commands");
  ASSERT_EQ(cmds.size(), 11u);  // the instantiated definition is not a command of its own
  EXPECT_EQ(cmds[0].at("type"), "module");
  EXPECT_EQ(cmds[0].at("name"), "$I");
  EXPECT_EQ(cmds[0].at("line"), 2);
  EXPECT_EQ(modules_.bytes(cmds[0].at("filename").get<std::string>()).size(), 48u);  // the binary module's bytes, held
  EXPECT_EQ(cmds[1].at("action").at("module"), "$I");
  EXPECT_EQ(cmds[2].at("expected")[0].at("type"), "either");
  EXPECT_FALSE(cmds[7].contains("skip"));  // (ref.null any): GC, implemented
  EXPECT_FALSE(cmds[8].contains("skip"));  // assert_exception runs
  EXPECT_EQ(cmds[9].at("module_type"), "text");
  EXPECT_EQ(cmds[10].at("type"), "module_definition");

  SpecFileResult res;
  execute_commands(doc, modules_, EngineConfig{}, res);
  EXPECT_EQ(res.passed, 8);  // the memory64 definition decodes and validates: a pass
  EXPECT_EQ(res.failed, 2);
  ASSERT_EQ(res.failures.size(), 2u);
  EXPECT_NE(res.failures[0].find(":8:"), std::string::npos) << res.failures[0];
  // f returns 42: assert_exception fails, saying so
  EXPECT_NE(res.failures[1].find(":10:"), std::string::npos) << res.failures[1];
  EXPECT_NE(res.failures[1].find("expected an exception, got a result"), std::string::npos) << res.failures[1];
  EXPECT_EQ(res.skipped.count("needs GC (part 2)"), 0u);
  EXPECT_EQ(res.skipped["text-format module (not a binary test)"], 1);
  EXPECT_EQ(res.skipped.count("needs memory64"), 0u);
}

TEST(ScriptModules, ReadsHeldModulesThenTheFolderAndNamesAModuleItHasNot) {
  fs::path dir = fs::temp_directory_path() / ("dlab-script-modules-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "on_disk.wasm", std::ios::binary) << "disk";
  ScriptModules modules(dir);
  modules.add("held.wasm", std::string("\0asm", 4));
  EXPECT_EQ(modules.bytes("held.wasm"), (std::vector<uint8_t>{0, 'a', 's', 'm'}));
  EXPECT_EQ(modules.bytes("on_disk.wasm"), (std::vector<uint8_t>{'d', 'i', 's', 'k'}));
  try {
    modules.bytes("missing.wasm");
    ADD_FAILURE() << "a missing module was read";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("missing.wasm"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
  EXPECT_THROW(ScriptModules().bytes("held.wasm"), std::runtime_error);  // no folder, nothing held
}

TEST_F(TranslatedScript, ErrorsSayFileAndLine) {
  auto error = [&](const std::string& text) -> std::string {
    try {
      translate(text);
    } catch (const ScriptError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error("(module instance)"), "tiny.bin.wast:1: module instance without a preceding module definition");
  EXPECT_EQ(error("\n(assert_return (invoke \"f\") (i32.const 0x1_0000_0000))"), "tiny.bin.wast:2: integer out of range: 0x1_0000_0000");
  EXPECT_EQ(error("(assert_return (invoke \"f\") (i33.const 1))"), "tiny.bin.wast:1: unknown value i33.const");
  EXPECT_EQ(error("(module instance $X $Nope)"), "tiny.bin.wast:1: unknown module definition $Nope");
}

}  // namespace
}  // namespace dlab::wasm
