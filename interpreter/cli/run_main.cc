// dlab-run: a WASI command run in `dlab wasm run`'s default engine, as a program of its own, the
// way wasm3 or wasmtime run one: `dlab-run [options] module.wasm [args...]`.
//
// Why a second executable: `dlab` holds every command, engine and counter library, and a run of an
// empty module in it is mostly the dynamic loader binding libstdc++ and libfmt, and the pages of a
// 19 MB binary touched on the way. dlab-run is linked statically where the toolchain can (no loader,
// no symbol binding; CMakeLists.txt says why static-pie), its start-up functions laid out together by an order
// file made from a run of an empty module (interpreter/cli/dlab_run.order, tools/startup_order.py), and
// it parses its few options by hand: CLI11 includes <iostream>, whose initializer builds the C++
// locale at every start-up (a third of an empty module's instructions). Nor does it ask whether it
// runs under an emulator, as `dlab wasm run` does before it runs anything: that reads and parses
// /proc/cpuinfo, two thirds of an empty module's instructions on two cores, more on a big machine.
// It times nothing; `dlab wasm bench`, which times it, makes the check and says so in its results.
// The engine, the lowering and the WASI host are the very code `dlab wasm run` runs
// (wasi_command.h).
#include <cstdio>
#include <exception>
#include <filesystem>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/standard_output.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/unknown_imports.h"
#include "dispatchlab/interpreter/wasi.h"
#include "wasi_command.h"

namespace {

using namespace dlab;

constexpr const char* kUsage =
    "usage: dlab-run [OPTIONS] [--] module.wasm [ARGS...]\n"
    "\n"
    "Runs a WASI command (its _start) in the WebAssembly interpreter's default engine, the one `dlab wasm run`\n"
    "runs without engine options; ARGS are the program's argv[1..], passed as they are (after the module,\n"
    "nothing is read as an option). Exit status: the program's own (proc_exit, 0 when _start returns); 1 when\n"
    "it traps, cannot be read, decoded, validated or linked (said on stderr); 2 for a wrong command line.\n"
    "\n"
    "Options:\n"
    "  --dir HOST[::GUEST]     preopen the host folder HOST, read-only, as GUEST (default: HOST as written);\n"
    "                          nothing outside it can be reached; repeat for more (fds 3, 4, ... in order)\n"
    "  --dir-rw HOST[::GUEST]  as --dir, and the program may create, write, rename and remove in it\n"
    "  --env KEY=VALUE         a variable of the program's environment (none by default); repeat for more\n"
    "  --trap-unknown-imports  link a function import no module provides (not WASI's) to one that traps\n"
    "                          \"unknown import M.N called\" if called: for a program built for a richer host\n"
    "  --engine                print the engine this build runs and why, and exit\n"
    "  -h, --help              print this help and exit\n"
    "\n"
    "For another engine, a budget, --invoke or a profile: `dlab wasm run` (dlab wasm run --help).\n";

// A wrong command line: said with the usage's first line, exit status 2, nothing run.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::vector<std::string> read_only_dirs, writable_dirs, env;
  std::string module;
  std::vector<std::string> args;
  bool help = false, engine = false, trap_unknown_imports = false;
};

Options parse_options(int argc, char** argv) {
  Options o;
  int i = 1;
  // An option's value: --dir X or --dir=X, as CLI11 (dlab's parser) reads them.
  std::optional<std::string> attached;
  auto value = [&](std::string_view option) -> std::string {
    if (attached) return *attached;
    if (i + 1 >= argc) throw UsageError(fmt::format("{} needs a value", option));
    return argv[++i];
  };
  for (; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a.empty() || a[0] != '-' || a == "-") break;  // the module
    attached.reset();
    if (const size_t eq = a.find('='); a.starts_with("--") && eq != std::string_view::npos) {
      attached = std::string(a.substr(eq + 1));
      a = a.substr(0, eq);
      if (a == "--engine" || a == "--trap-unknown-imports" || a == "--help")
        throw UsageError(fmt::format("{} takes no value", quote_input(a)));
    }
    if (a == "-h" || a == "--help") {
      o.help = true;
    } else if (a == "--engine") {
      o.engine = true;
    } else if (a == "--trap-unknown-imports") {
      o.trap_unknown_imports = true;
    } else if (a == "--dir") {
      o.read_only_dirs.push_back(value(a));
    } else if (a == "--dir-rw") {
      o.writable_dirs.push_back(value(a));
    } else if (a == "--env") {
      std::string kv = value(a);
      if (std::string why = cli::wasi_env_entry_error(kv); !why.empty()) throw UsageError("--env: " + why);
      o.env.push_back(kv);
    } else {
      throw UsageError(fmt::format("{} is not an option of dlab-run (--help lists them; after the module every argument "
                                   "is the program's)",
                                   quote_input(a)));
    }
  }
  if (o.help || o.engine) return o;
  if (i >= argc) throw UsageError("no module: give module.wasm");
  o.module = argv[i++];
  o.args.assign(argv + i, argv + argc);
  return o;
}

int run(int argc, char** argv) {
  Options o = parse_options(argc, argv);
  if (o.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const wasm::EngineConfig engine = cli::default_run_engine();
  if (o.engine) {
    fmt::print("{} (dispatch {}, placement {}, {} IR, bounds {}, lowering {}): {}\n", engine.engine_name(),
               wasm::dispatch_name(engine.dispatch), wasm::placement_name(engine.placement), wasm::ir_name(engine.lowering.ir),
               wasm::bounds_name(engine.bounds), wasm::lowering_name(engine.lowering), cli::kDefaultRunEngineWhy);
    return 0;
  }
  wasm::WasiOptions wasi;
  auto preopen = [&](const std::string& spec, bool writable) {
    try {
      wasi.preopens.push_back(cli::parse_wasi_preopen(spec, writable));
    } catch (const std::invalid_argument& e) {
      throw UsageError(fmt::format("{}: {}", writable ? "--dir-rw" : "--dir", e.what()));
    }
  };
  for (const auto& d : o.read_only_dirs) preopen(d, false);
  for (const auto& d : o.writable_dirs) preopen(d, true);
  wasm::Module m = cli::load_checked_module(o.module);
  wasi.args.push_back(std::filesystem::path(o.module).filename().string());
  wasi.args.insert(wasi.args.end(), o.args.begin(), o.args.end());
  wasi.env = o.env;
  wasm::Runtime rt(engine);
  return cli::run_reporting_failures("dlab-run", o.module, rt, [&] {
    // In here: a WASI import of the wrong type is a link error, said with the file's name.
    wasm::register_wasi(rt, m, wasi);
    if (o.trap_unknown_imports) wasm::link_unknown_imports_as_traps(rt, m);
    wasm::Instance& inst = rt.instantiate(std::move(m));
    auto start = inst.exports.find("_start");
    if (start == inst.exports.end() || start->second.kind != wasm::ExternKind::kFunc)
      throw std::runtime_error(fmt::format("{}: no exported function _start: not a WASI command (`dlab wasm run --invoke NAME` "
                                           "calls another export)",
                                           o.module));
    rt.invoke(start->second.func, {});
  });
}

}  // namespace

// Exit status as dlab's: 0 done (or the program's own), 1 it failed (said on stderr), 2 a wrong
// command line. Standard output is dlab's checked writer (standard_output.h): output that never
// reached its reader (a full disk, a reader that quit) is a failure, never a silent success, though
// the program itself was told of it (its fd_write's errno) and may have gone on.
int main(int argc, char** argv) {
  standard_output::reserve_standard_descriptors();
  standard_output::install();
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (const UsageError& e) {
    standard_output::write_stderr(std::string("dlab-run: ") + e.what() +
                                  "\nusage: dlab-run [OPTIONS] [--] module.wasm [ARGS...] (--help for more)\n");
    status = 2;
  } catch (const std::bad_alloc&) {
    standard_output::write_stderr("dlab-run: error: out of memory\n");
  } catch (const std::exception& e) {
    std::fflush(stdout);  // the program's output before the error
    standard_output::write_stderr(std::string("dlab-run: error: ") + e.what() + "\n");
  }
  if (int err = standard_output::flush_and_check(); err != 0) {
    standard_output::write_stderr(standard_output::failure_message(err));
    return status == 0 ? 1 : status;
  }
  return status;
}
