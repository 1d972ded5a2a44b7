// Test helper: a module from WebAssembly text, assembled at test time (wabt's wat2wasm, or for
// 3.0 features binaryen's wasm-as), decoded and validated.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "dispatchlab/harness/process.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::wasm::test_support {

// `wat` assembled by `assembler` (an argument vector in which "{in}" and "{out}" stand for the
// text and binary files), decoded and validated.
inline Module assemble_with(std::vector<std::string> assembler, const std::string& wat, const char* what) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("dlab-wat-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "m.wat") << wat;
  for (std::string& a : assembler) {
    if (a == "{in}") a = (dir / "m.wat").string();
    if (a == "{out}") a = (dir / "m.wasm").string();
  }
  if (!run_process(assembler).ok()) throw std::runtime_error(std::string(what) + " failed on:\n" + wat);
  std::ifstream in(dir / "m.wasm", std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  fs::remove_all(dir);
  return decode_valid_module(bytes);
}

// WebAssembly 3.0 text (GC, exnref): binaryen's wasm-as through tools/assemble-wat (wabt stops
// short of them).
inline Module assemble_3_0(const std::string& wat) { return assemble_with({DLAB_ASSEMBLE_WAT, "{in}", "{out}"}, wat, "tools/assemble-wat"); }

inline Module assemble(const std::string& wat) {
  return assemble_with({DLAB_WAT2WASM, "--enable-tail-call", "{in}", "-o", "{out}"}, wat, "wat2wasm");
}

}  // namespace dlab::wasm::test_support
