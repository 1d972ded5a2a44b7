#include "engine_choices.h"

#include <charconv>

#include <fmt/format.h>

#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/wasi.h"

namespace dlab::cli {


std::vector<std::string> dispatch_choices(bool with_all) {
  std::vector<std::string> out;
  if (with_all) out.push_back("all");
  for (auto d : wasm::every_dispatch_mode()) out.push_back(wasm::dispatch_name(d));
  return out;
}

std::vector<std::string> built_dispatch_modes() {
  std::vector<std::string> out;
  for (auto d : wasm::dispatch_modes()) out.push_back(wasm::dispatch_name(d));
  return out;
}

const char* unavailable_engine_option(wasm::Dispatch d, wasm::Placement p, wasm::Budget b) {
  if (!wasm::engine_unavailable(d, wasm::Placement::kSp).empty()) return "--dispatch";
  if (!wasm::engine_unavailable(d, p).empty()) return "--placement";
  return wasm::budget_bounded(b) ? "--budget" : "--bounds";
}

std::vector<std::string> placement_choices(bool with_all) {
  std::vector<std::string> out;
  if (with_all) out.push_back("all");
  for (auto p : wasm::placements()) out.push_back(wasm::placement_name(p));
  return out;
}

std::vector<std::string> budget_choices() {
  std::vector<std::string> out;
  for (auto b : wasm::budgets()) out.push_back(wasm::budget_name(b));
  return out;
}

std::vector<std::string> bounds_choices() {
  std::vector<std::string> out;
  for (auto b : wasm::bounds_list()) out.push_back(wasm::bounds_name(b));
  return out;
}

std::string bounds_help() {
  return "how 32-bit memories' loads and stores stay in bounds: check (each compares its address with the memory's size) "
         "or guard (no compare: each memory is an 8 GiB reservation whose pages past its size are inaccessible, and the "
         "fault becomes the trap; built for tail and tail_pn with the sp placement and no budget, on 64-bit Linux)";
}

CLI::Option* add_bounds_option(CLI::App* app, std::string& bounds) {
  return app->add_option("--bounds", bounds, bounds_help())->check(CLI::IsMember(bounds_choices()))->capture_default_str();
}

std::vector<std::string> lowering_choices() {
  std::vector<std::string> out;
  for (auto l : wasm::lowerings()) out.push_back(wasm::lowering_name(l));
  return out;
}

std::string default_lowering() { return wasm::lowering_name(wasm::Lowering{}); }

std::vector<std::string> ir_choices() {
  std::vector<std::string> out;
  for (auto ir : wasm::irs()) out.push_back(wasm::ir_name(ir));
  return out;
}

CLI::Option* add_ir_option(CLI::App* app, std::string& ir) {
  return app
      ->add_option("--ir", ir,
                   "the IR the lowering writes: stack (operand-stack code, every placement) or register (each instruction names "
                   "the frame slots of its operands and result: local.get/set/tee and most stack traffic disappear; built for "
                   "the sp placement)")
      ->check(CLI::IsMember(ir_choices()))
      ->capture_default_str();
}

CLI::Validator clock_validator() {
  return CLI::Validator(
      [](std::string& t) {
        try {
          wasm::parse_clock(t);
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "real|fixed:NS");
}

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

CLI::Option* add_heap_limit_option(CLI::App* app, uint64_t& bytes) {
  return app
      ->add_option("--heap-limit", bytes,
                   "limit the GC heap (struct and array objects, exceptions) to BYTES: a collection runs before an "
                   "allocation would pass it, and if that frees too little the program traps with \"out of memory\" "
                   "(default 0: no limit; collections run as the heap doubles)")
      ->check(CLI::Validator(
          [](std::string& s) {
            // Strictly a whole decimal number: "1e9", "-5" or "64k" would otherwise read as something else.
            uint64_t v = 0;
            auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            if (ec != std::errc() || end != s.data() + s.size()) return std::string("'" + s + "' is not a number of bytes");
            if (v > (uint64_t{1} << 40)) return std::string("above 1 TiB (1099511627776)");
            if (v != 0 && v < 65536) return std::string("a limit below 64 KiB (65536) leaves no room to run");
            return std::string();
          },
          "BYTES: 0 or 65536..2^40"))
      ->capture_default_str();
}

std::string gc_summary(const wasm::GcStats& s) {
  return fmt::format("{} collections, {:.3f} ms in the collector, {} objects ({:.1f} MB) allocated, peak live {:.1f} KB",
                     s.collections, s.collect_ns / 1e6, s.objects_allocated, s.bytes_allocated / 1e6, s.peak_live_bytes / 1e3);
}

}  // namespace dlab::cli
