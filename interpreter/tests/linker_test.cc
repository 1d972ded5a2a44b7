#include <gtest/gtest.h>

#include "dispatchlab/interpreter/linker.h"

namespace dlab::wasm {
namespace {

Import import_of(const std::string& mod, const std::string& name, ExternKind kind) {
  Import im;
  im.module = mod;
  im.name = name;
  im.kind = kind;
  return im;
}

TEST(Linker, ResolvesAgainstSpectestAndRegisteredModules) {
  Linker l;
  Module m;
  m.types.push_back(FuncType{{ValType::kI32}, {}});
  auto f = import_of("spectest", "print_i32", ExternKind::kFunc);
  m.imports.push_back(f);
  auto mem = import_of("spectest", "memory", ExternKind::kMemory);
  mem.memory = {1, std::nullopt};
  m.imports.push_back(mem);
  m.exports.push_back({"mem", ExternKind::kMemory, 0});
  Exports ex = l.link(m);
  EXPECT_EQ(ex.at("mem").memory.min, 1u);  // the provided memory's actual type
  ASSERT_TRUE(ex.at("mem").memory.max.has_value());
  EXPECT_EQ(*ex.at("mem").memory.max, 2u);

  Module wrong = m;
  wrong.types[0] = FuncType{{ValType::kI64}, {}};  // print_i32 takes an i32
  EXPECT_THROW(l.link(wrong), LinkError);
  Module too_big = m;
  too_big.imports[1].memory = {2, std::nullopt};  // spectest memory has 1 page
  EXPECT_THROW(l.link(too_big), LinkError);
  Module missing;
  missing.imports.push_back(import_of("nowhere", "x", ExternKind::kGlobal));
  EXPECT_THROW(l.link(missing), LinkError);

  l.register_module("M", ex);
  Module user;
  auto from_m = import_of("M", "mem", ExternKind::kMemory);
  from_m.memory = {1, 2};
  user.imports.push_back(from_m);
  EXPECT_NO_THROW(l.link(user));
}

}  // namespace
}  // namespace dlab::wasm
