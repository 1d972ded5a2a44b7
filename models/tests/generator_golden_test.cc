// The generator, on a two-kind spec, produces exactly the committed golden text; and the
// committed models/generated files are what the real spec produces today.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "model_generator.h"

namespace fs = std::filesystem;

namespace dlab::models {
namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void expect_matches_directory(const std::map<std::string, std::string>& files, const fs::path& dir) {
  size_t on_disk = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    ++on_disk;
    EXPECT_TRUE(files.count(e.path().filename().string())) << e.path() << " is not generated any more";
  }
  EXPECT_EQ(on_disk, files.size());
  for (const auto& [name, text] : files) EXPECT_EQ(slurp(dir / name), text) << name << " differs";
}

TEST(GeneratorGolden, TinySpecGivesTheGoldenFiles) {
  fs::path golden = fs::path(DLAB_MODELS_DIR) / "tests" / "golden";
  auto spec = Spec::from_json_text(slurp(golden / "tiny_spec.json"));
  expect_matches_directory(generate(spec, "models/tests/golden/tiny_spec.json"), golden / "expected");
}

TEST(GeneratorGolden, CommittedModelSourcesAreCurrent) {
  fs::path models = DLAB_MODELS_DIR;
  auto spec = Spec::from_json_text(slurp(models / "spec" / "handlers.json"));
  expect_matches_directory(generate(spec, "models/spec/handlers.json"), models / "generated");
}

TEST(GeneratorSpec, CopiesGetDistinctOddConstants) {
  std::set<unsigned long long> seen;
  for (const char* k : {"u", "o", "c", "b"})
    for (int i = 0; i < 512; ++i) {
      auto c = copy_constant(k, i);
      EXPECT_TRUE(c & 1);
      EXPECT_TRUE(seen.insert(c).second) << k << i;
    }
}

TEST(GeneratorSpec, RejectsInconsistentSpecs) {
  const std::string base = R"({"kinds": [{"name": "u", "doc": "", "body": ""}],
    "placements": [{"name": "sp", "height": "arg", "top": "mem", "doc": ""}, {"name": "vec", "height": "mem", "top": "mem", "doc": ""},
                 {"name": "sp_spill", "height": "spill", "top": "mem", "doc": ""}],
    "dispatch_modes": [{"name": "tail", "form": "tail", "convention": "default", "doc": ""},
                       {"name": "switch", "form": "switch", "convention": "default", "doc": ""},
                       {"name": "loop", "form": "switch", "convention": "default", "doc": ""},
                       {"name": "calls_pn", "form": "tail", "convention": "preserve_none", "doc": ""}], "models": [MODEL]})";
  auto with = [&](const std::string& m) { return std::string(base).replace(base.find("MODEL"), 5, m); };
  EXPECT_NO_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["sp"], "dispatch": ["switch"]})")));
  EXPECT_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"x": 2}, "placements": ["sp"], "dispatch": ["tail"]})")),
               std::runtime_error);
  EXPECT_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["nope"], "dispatch": ["tail"]})")),
               std::runtime_error);
  // goto/switch hold the state in locals: every placement but the one defined by argument passing.
  EXPECT_NO_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["vec"], "dispatch": ["switch"]})")));
  EXPECT_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["sp_spill"], "dispatch": ["switch"]})")),
               std::runtime_error);
  // ... unless it is listed as not generated, with its reason.
  auto spec = Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["sp", "sp_spill"],
      "dispatch": ["tail", "switch"], "not_generated": [{"placements": ["sp_spill"], "dispatch": ["switch"], "why": "no arguments"}]})"));
  auto files = generate(spec, "t");
  EXPECT_TRUE(files.count("m_sp_spill_tail.cc"));
  EXPECT_FALSE(files.count("m_sp_spill_switch.cc"));
  EXPECT_NE(files.at("model_docs.inc").find("DL_NOT_GENERATED(\"m\", \"sp_spill\", \"switch\", \"no arguments\")"), std::string::npos);
  EXPECT_THROW(Spec::from_json_text(with(R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["sp"], "dispatch": ["tail"],
      "not_generated": [{"placements": ["sp"], "dispatch": ["tail"], "why": ""}]})")), std::runtime_error);
}

// What a dispatch mode generates follows its form and convention, never its name: a mode named
// "loop" of the switch form is a switch, one named "calls_pn" of the tail form with preserve_none
// is the tail body with preserve_none handlers.
TEST(GeneratorSpec, ModesGenerateByTheirFormAndConvention) {
  const std::string model = R"({"name": "m", "doc": "", "kinds": {"u": 2}, "placements": ["sp"], "dispatch": ["loop", "calls_pn"]})";
  std::string text = R"({"kinds": [{"name": "u", "doc": "", "body": ""}],
    "placements": [{"name": "sp", "height": "arg", "top": "mem", "doc": ""}],
    "dispatch_modes": [{"name": "loop", "form": "switch", "convention": "default", "doc": ""},
                       {"name": "calls_pn", "form": "tail", "convention": "preserve_none", "doc": ""}], "models": [MODEL]})";
  text.replace(text.find("MODEL"), 5, model);
  auto files = generate(Spec::from_json_text(text), "t");
  const std::string& loop = files.at("m_sp_loop.cc");
  EXPECT_NE(loop.find("#define DL_DISPATCH_SWITCH 1"), std::string::npos) << loop;
  EXPECT_NE(loop.find("#define DL_PN 0"), std::string::npos) << loop;
  EXPECT_NE(loop.find("m_switch.inc"), std::string::npos) << loop;
  const std::string& calls = files.at("m_sp_calls_pn.cc");
  EXPECT_NE(calls.find("#define DL_DISPATCH_TAIL 1"), std::string::npos) << calls;
  EXPECT_NE(calls.find("#define DL_PN 1"), std::string::npos) << calls;
  EXPECT_NE(files.at("model_docs.inc").find(R"(DL_DISPATCH_DOC("loop", "switch", "default")"), std::string::npos);
  // A form or convention the generator does not know, or preserve_none where no call is made.
  auto mode = [&](const std::string& row) {
    std::string t = R"({"kinds": [], "placements": [], "dispatch_modes": [ROW], "models": []})";
    return Spec::from_json_text(t.replace(t.find("ROW"), 3, row));
  };
  EXPECT_NO_THROW(mode(R"({"name": "x", "form": "goto", "convention": "default", "doc": ""})"));
  EXPECT_THROW(mode(R"({"name": "x", "form": "threaded", "convention": "default", "doc": ""})"), std::runtime_error);
  EXPECT_THROW(mode(R"({"name": "x", "form": "tail", "convention": "fastcall", "doc": ""})"), std::runtime_error);
  EXPECT_THROW(mode(R"({"name": "x", "form": "goto", "convention": "preserve_none", "doc": ""})"), std::runtime_error);
  EXPECT_THROW(mode(R"({"name": "x", "doc": ""})"), std::exception);
}

}  // namespace
}  // namespace dlab::models
