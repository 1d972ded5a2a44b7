// `dlab wasm`: the WebAssembly interpreter's commands. Today: decoding a module and the spec-suite
// runner at its decoding stage.
#include <fstream>

#include <fmt/format.h>

#include "../../harness/cli/commands.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/spec_runner.h"
#include "dispatchlab/interpreter/validator.h"

namespace dlab::cli {

void add_wasm_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("wasm", "the WebAssembly interpreter: decode, run a module, run the spec suite");
  cmd->require_subcommand(1);

  auto* decode = cmd->add_subcommand("decode", "decode and validate a .wasm module and summarise it, or say why it is malformed or invalid");
  auto file = std::make_shared<std::string>();
  decode->add_option("module", *file, "module.wasm")->required()->check(CLI::ExistingFile);
  decode->callback([file] {
    std::ifstream in(*file, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    try {
      auto m = wasm::decode_module(bytes);
      try {
        wasm::validate_module(m);
      } catch (const wasm::ValidationError& e) {
        throw std::runtime_error(fmt::format("{}: invalid: {}", *file, e.what()));
      }
      fmt::print("{}: {} types, {} imports, {} functions, {} tables, {} memories, {} globals, {} exports, {} element and {} data "
                 "segments{}\n",
                 *file, m.types.size(), m.imports.size(), m.functions.size(), m.tables.size(), m.memories.size(), m.globals.size(),
                 m.exports.size(), m.elements.size(), m.data.size(), m.start ? fmt::format(", start {}", *m.start) : "");
    } catch (const wasm::DecodeError& e) {
      throw std::runtime_error(fmt::format("{}: malformed at byte {}: {}", *file, e.offset(), e.what()));
    }
  });

  auto* spec = cmd->add_subcommand("spec", "run the WebAssembly spec tests (converted with wast2json at run time), per file and in total");
  auto suite = std::make_shared<std::string>(DLAB_WASM_TESTSUITE);
  auto verbose = std::make_shared<bool>(false);
  auto stage = std::make_shared<std::string>("execute");
  auto dispatch = std::make_shared<std::string>("all");
  auto only = std::make_shared<std::string>();
  spec->add_option("--stage", *stage,
                   "decode; validate (also the validator); link (also import resolution, register, assert_unlinkable); "
                   "execute (everything: instantiation, actions, every assertion)")
      ->check(CLI::IsMember({"decode", "validate", "link", "execute"}))
      ->capture_default_str();
  spec->add_option("--dispatch", *dispatch, "execute stage: switch, tail, tail_pn, or all (each mode in turn)")
      ->check(CLI::IsMember({"all", "switch", "tail", "tail_pn"}))
      ->capture_default_str();
  spec->add_option("--suite", *suite, "folder of .wast files (searched recursively)")->capture_default_str();
  spec->add_option("--only", *only, "run only files whose path contains this text");
  spec->add_flag("--verbose", *verbose, "list every failure");
  spec->callback([suite, verbose, stage, dispatch, only] {
    if (!std::filesystem::is_directory(*suite))
      throw std::runtime_error(*suite + " not found: pass --suite (the spec tests live in ../shared/wasm-testsuite)");
    wasm::SpecStage st = *stage == "link"       ? wasm::SpecStage::kLink
                         : *stage == "validate" ? wasm::SpecStage::kValidate
                         : *stage == "execute"  ? wasm::SpecStage::kExecute
                                                : wasm::SpecStage::kDecode;
    std::vector<wasm::Dispatch> modes;
    if (st != wasm::SpecStage::kExecute) modes = {wasm::Dispatch::kTail};  // earlier stages run no code
    else if (*dispatch == "all") modes = wasm::dispatch_modes();
    else modes = {*wasm::parse_dispatch(*dispatch)};
    int total_failed = 0, total_errors = 0;
    for (wasm::Dispatch mode : modes) {
      int passed = 0, failed = 0, errors = 0;
      std::map<std::string, int> skipped;
      std::map<std::string, int> skipped_files;  // reason -> files with such skips
      if (st == wasm::SpecStage::kExecute) fmt::print("== dispatch {} ==\n", wasm::dispatch_name(mode));
      for (const auto& f : wasm::spec_files(*suite)) {
        if (!only->empty() && f.find(*only) == std::string::npos) continue;
        auto r = wasm::run_spec_file(f, st, mode);
        int sk = 0;
        for (const auto& [why, n] : r.skipped) {
          skipped[why] += n;
          ++skipped_files[why];
          sk += n;
        }
        std::string name = std::filesystem::relative(f, *suite).string();
        if (!r.error.empty()) {
          ++errors;
          fmt::print("ERROR {:<40} {}\n", name, r.error);
          continue;
        }
        fmt::print("{:<5} {:<40} {} passed, {} failed, {} skipped\n", r.failed ? "FAIL" : "ok", name, r.passed, r.failed, sk);
        if (*verbose || r.failed) {
          size_t shown = 0;
          for (const auto& why : r.failures) {
            if (!*verbose && ++shown > 20) {
              fmt::print("        ... {} more (--verbose lists all)\n", r.failures.size() - 20);
              break;
            }
            fmt::print("        {}\n", why);
          }
        }
        passed += r.passed;
        failed += r.failed;
      }
      int total_skipped = 0;
      for (const auto& [why, n] : skipped) total_skipped += n;
      fmt::print("\nskipped, by reason:\n");
      for (const auto& [why, n] : skipped) fmt::print("  {:>6} commands in {:>3} files  {}\n", n, skipped_files[why], why);
      fmt::print("\nspec{}: {} passed, {} failed, {} skipped\n\n",
                 st == wasm::SpecStage::kExecute ? fmt::format(" ({} dispatch)", wasm::dispatch_name(mode)) : "", passed, failed,
                 total_skipped);
      total_failed += failed;
      total_errors += errors;
    }
    if (total_failed || total_errors)
      throw std::runtime_error(fmt::format("{} spec commands failed, {} files could not be converted", total_failed, total_errors));
  });
}

}  // namespace dlab::cli
