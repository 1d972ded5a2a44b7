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

// WebAssembly 3.0 text (GC, exnref): assembled by binaryen's wasm-as through tools/assemble-wat
// (wabt stops short of them).
inline Module assemble_3_0(const std::string& wat) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("dlab-wat3-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "m.wat") << wat;
  if (!run_process({DLAB_ASSEMBLE_WAT, (dir / "m.wat").string(), (dir / "m.wasm").string()}).ok())
    throw std::runtime_error("tools/assemble-wat failed on:\n" + wat);
  std::ifstream in(dir / "m.wasm", std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  fs::remove_all(dir);
  Module m = decode_module(bytes);
  validate_module(m);
  return m;
}

inline Module assemble(const std::string& wat) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / fmt::format("dlab-wat-{}", getpid());
  fs::create_directories(dir);
  std::ofstream(dir / "m.wat") << wat;
  if (!run_process({DLAB_WAT2WASM, "--enable-tail-call", (dir / "m.wat").string(), "-o", (dir / "m.wasm").string()}).ok())
    throw std::runtime_error("wat2wasm failed on:\n" + wat);
  std::ifstream in(dir / "m.wasm", std::ios::binary);
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  fs::remove_all(dir);
  Module m = decode_module(bytes);
  validate_module(m);
  return m;
}

}  // namespace dlab::wasm::test_support
