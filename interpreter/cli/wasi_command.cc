#include "wasi_command.h"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::cli {

wasm::WasiPreopen parse_wasi_preopen(const std::string& spec, bool writable) {
  wasm::WasiPreopen p;
  p.writable = writable;
  const size_t sep = spec.find("::");
  p.host = sep == std::string::npos ? spec : spec.substr(0, sep);
  p.guest = sep == std::string::npos ? spec : spec.substr(sep + 2);
  if (spec.empty()) throw std::invalid_argument("an empty folder: give HOST (the guest sees it as HOST) or HOST::GUEST");
  if (p.host.empty()) throw std::invalid_argument(fmt::format("{}: no host folder before '::'", quote_input(spec)));
  if (p.guest.empty()) throw std::invalid_argument(fmt::format("{}: no guest name after '::' (give / or a name)", quote_input(spec)));
  std::error_code ec;
  if (!std::filesystem::is_directory(p.host, ec))
    throw std::invalid_argument(fmt::format("{}: {}", quote_input(p.host),
                                            ec && ec != std::errc::no_such_file_or_directory ? ec.message()
                                            : std::filesystem::exists(p.host, ec)             ? "not a folder"
                                                                                              : "no such folder"));
  return p;
}

std::string wasi_env_entry_error(const std::string& entry) {
  auto eq = entry.find('=');
  return eq == std::string::npos || eq == 0 ? quote_input(entry) + " is not KEY=VALUE" : std::string();
}

wasm::Module load_checked_module(const std::string& file) {
  // MappedInputFile refuses what is not a regular file: /dev/zero is not read forever.
  MappedInputFile bytes(file);
  try {
    return wasm::decode_valid_module(bytes.data(), bytes.size());
  } catch (const wasm::DecodeError& e) {
    throw std::runtime_error(fmt::format("{}: malformed at byte {}: {}", file, e.offset(), e.what()));
  } catch (const wasm::ValidationError& e) {
    throw std::runtime_error(fmt::format("{}: invalid: {}", file, e.what()));
  }
}

// The configuration measured fastest on the held-out programs of the corpus (lz4, lua) on a Zen 4
// VM, results/zen4-25-17/ (docs/interpreter/register-ir.md, engines.md: bounds): tail_pn with the
// register IR, every technique and guard pages (chosen on sqlite's instruction count).
const char* const kDefaultRunEngineWhy =
    "with --ir register and --bounds guard: the fastest measured on the corpus's held-out programs "
    "(docs/interpreter/register-ir.md, docs/interpreter/engines.md#bounds-guard-pages---bounds-guard); "
    "tail where this build has no preserve_none";

wasm::Dispatch default_run_dispatch() {
  return wasm::engine_unavailable(wasm::Dispatch::kTailPreserveNone, wasm::Placement::kSp).empty() ? wasm::Dispatch::kTailPreserveNone
                                                                                                   : wasm::Dispatch::kTail;
}

wasm::Bounds default_run_bounds(wasm::Dispatch d, wasm::Placement p, wasm::Budget b) {
  return wasm::engine_unavailable(d, p, b, wasm::Bounds::kGuard).empty() ? wasm::Bounds::kGuard : wasm::Bounds::kCheck;
}

wasm::Ir default_run_ir(wasm::Dispatch d, wasm::Placement p, wasm::Budget b, wasm::Bounds bounds) {
  return wasm::ir_unavailable(wasm::Ir::kRegister, d, p, b, bounds).empty() ? wasm::Ir::kRegister : wasm::Ir::kStack;
}

wasm::EngineConfig default_run_engine() {
  wasm::EngineConfig e;
  e.dispatch = default_run_dispatch();
  e.budget = wasm::Budget::kNone;
  e.bounds = default_run_bounds(e.dispatch, e.placement, e.budget);
  e.lowering.ir = default_run_ir(e.dispatch, e.placement, e.budget, e.bounds);
  return e;
}

int run_reporting_failures(const char* who, const std::string& file, const wasm::Runtime& rt, const std::function<void()>& body,
                           const std::function<void()>& before_failure) {
  auto failing = [&] {
    std::fflush(stdout);  // the program's output first, then the error
    if (before_failure) before_failure();
  };
  try {
    body();
    return 0;
  } catch (const wasm::ProcExit& e) {
    // WASI's exit code is a u32 but a process status is 8 bits: 256 would read as success.
    // Outside 0..255 the status is 1 and stderr says what the program asked for.
    uint32_t code = static_cast<uint32_t>(e.code());
    if (code <= 255) return static_cast<int>(code);
    std::fflush(stdout);
    fmt::print(stderr, "{}: {}: the program exited with code {}, outside 0..255: exit status 1\n", who, file, code);
    return 1;
  } catch (const wasm::Exception& e) {
    // A wasm exception no handler caught: its tag by the name an instance exports it under.
    failing();
    const wasm::ExnInst* exn = e.exception();
    std::string tag = "a tag no instance exports";
    for (const auto& inst : rt.instances())
      for (const auto& [name, v] : inst->exports)
        if (v.kind == wasm::ExternKind::kTag && v.tag == exn->tag) tag = "tag \"" + name + "\"";
    std::string payload;
    for (uint64_t w : exn->payload) payload += (payload.empty() ? "" : " ") + fmt::format("{:#x}", w);
    throw std::runtime_error(fmt::format("{}: uncaught exception of {} (payload{}{})", file, tag, payload.empty() ? "" : " ",
                                         payload.empty() ? " empty" : payload));
  } catch (const wasm::Suspended&) {
    throw;  // the caller's budget: it says which
  } catch (const wasm::Trap& e) {
    failing();
    throw std::runtime_error(fmt::format("{}: trap: {}", file, e.what()));
  } catch (const wasm::LinkError& e) {
    throw std::runtime_error(fmt::format("{}: cannot link: {}", file, e.what()));
  } catch (const wasm::Unsupported& e) {
    throw std::runtime_error(fmt::format("{}: cannot run: {}", file, e.what()));
  } catch (const wasm::ImplementationLimit& e) {
    throw std::runtime_error(fmt::format("{}: cannot run: implementation limit: {}", file, e.what()));
  }
}

}  // namespace dlab::cli
