// The engines and the axes they are built on, by name: the dispatch modes, placements, budgets,
// bounds, lowerings and IRs of engines.def and lowerings.def (names, parsing, lists, help), the
// engine table (engine_registry.h), and why an engine or IR is not available in this build.
#include "runtime/engine_registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/guard_pages.h"

namespace dlab::wasm {

using runtime_impl::Engine;
using runtime_impl::find_engine;
using runtime_impl::EngineBuild;

const char* dispatch_name(Dispatch d) {
  switch (d) {
#define DISPATCH(name, enumerator, file, form, convention) \
  case Dispatch::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  }
  return "?";
}

const char* dispatch_convention(Dispatch d) {
  switch (d) {
#define DLW_CONVENTION_DEFAULT "default"
#define DLW_CONVENTION_PRESERVE_NONE "preserve_none"
#define DISPATCH(name, enumerator, file, form, convention) \
  case Dispatch::enumerator: return DLW_CONVENTION_##convention;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
#undef DLW_CONVENTION_DEFAULT
#undef DLW_CONVENTION_PRESERVE_NONE
  }
  return "default";
}

DispatchForm dispatch_form(Dispatch d) {
  switch (d) {
#define DLW_FORM_LOOP DispatchForm::kLoop
#define DLW_FORM_HANDLERS DispatchForm::kHandlers
#define DLW_FORM_THREADED DispatchForm::kThreaded
#define DISPATCH(name, enumerator, file, form, convention) \
  case Dispatch::enumerator: return DLW_FORM_##form;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
#undef DLW_FORM_LOOP
#undef DLW_FORM_HANDLERS
#undef DLW_FORM_THREADED
  }
  return DispatchForm::kLoop;
}

std::optional<Dispatch> parse_dispatch(std::string_view name) {
#define DISPATCH(n, enumerator, file, form, convention) \
  if (name == #n) return Dispatch::enumerator;
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  return std::nullopt;
}


const char* placement_name(Placement p) {
  switch (p) {
#define PLACEMENT(name, enumerator, sp, top) \
  case Placement::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  }
  return "?";
}

std::optional<Placement> parse_placement(std::string_view name) {
  for (Placement p : placements())
    if (name == placement_name(p)) return p;
  return std::nullopt;
}

std::vector<Placement> placements() {
  return {
#define PLACEMENT(name, enumerator, sp, top) Placement::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
  };
}

const char* budget_name(Budget b) {
  switch (b) {
#define BUDGET(name, enumerator, counter) \
  case Budget::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  }
  return "?";
}

BudgetCounter budget_counter(Budget b) {
  switch (b) {
#define DLW_COUNTER_NONE BudgetCounter::kNone
#define DLW_COUNTER_ARG BudgetCounter::kArg
#define DLW_COUNTER_MACHINE BudgetCounter::kMachine
#define DLW_COUNTER_EPOCH BudgetCounter::kEpoch
#define BUDGET(name, enumerator, counter) \
  case Budget::enumerator: return DLW_COUNTER_##counter;
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
#undef DLW_COUNTER_NONE
#undef DLW_COUNTER_ARG
#undef DLW_COUNTER_MACHINE
#undef DLW_COUNTER_EPOCH
  }
  return BudgetCounter::kNone;
}

// What each kind of counter does, for the help: a new BUDGET row of a kind that exists is
// described with no other change.
namespace {
constexpr const char* kCounterNONE = "unbounded";
constexpr const char* kCounterARG = "fuel counted on every branch and call in a handler argument (a local in switch/goto)";
constexpr const char* kCounterMACHINE = "fuel counted in the machine, loaded and stored where it is spent";
constexpr const char* kCounterEPOCH = "an epoch a host timer bumps, checked against the deadline on every branch and call";
}  // namespace

std::string budget_help() {
  std::string out;
#define BUDGET(name, enumerator, counter) out += std::string(out.empty() ? "" : "; ") + #name + ": " + kCounter##counter;
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  return out;
}

std::optional<Budget> parse_budget(std::string_view name) {
  for (Budget b : budgets())
    if (name == budget_name(b)) return b;
  return std::nullopt;
}

std::vector<Budget> budgets() {
  return {
#define BUDGET(name, enumerator, counter) Budget::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
  };
}

const char* bounds_name(Bounds b) {
  switch (b) {
#define BOUNDS(name, enumerator, how) \
  case Bounds::enumerator: return #name;
#include "dispatchlab/interpreter/engines.def"
#undef BOUNDS
  }
  return "?";
}

std::optional<Bounds> parse_bounds(std::string_view name) {
  for (Bounds b : bounds_list())
    if (name == bounds_name(b)) return b;
  return std::nullopt;
}

std::vector<Bounds> bounds_list() {
  return {
#define BOUNDS(name, enumerator, how) Bounds::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BOUNDS
  };
}

Lowering Lowering::none() {
  Lowering l;
#define TECHNIQUE(name, help) l.name = false;
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return l;
}

std::string lowering_name(Lowering l) {
  std::string out;
#define TECHNIQUE(name, help) \
  if (l.name) out += (out.empty() ? "" : "+") + std::string(#name);
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return out.empty() ? "plain" : out;
}

std::optional<Lowering> parse_lowering(std::string_view name) {
  for (Lowering l : lowerings())
    if (name == lowering_name(l)) return l;
  return std::nullopt;
}

std::vector<Lowering> lowerings() {
  // Every subset, by the bits of a counter: technique k is bit k, so "plain" comes first, then
  // each technique alone in the registry's order, then the pairs and so on up to every technique.
  struct Row {
    bool Lowering::*field;
  };
  static const Row rows[] = {
#define TECHNIQUE(name, help) {&Lowering::name},
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  };
  constexpr size_t n = sizeof rows / sizeof rows[0];
  std::vector<Lowering> out;
  for (size_t count = 0; count <= n; ++count)
    for (unsigned bits = 0; bits < (1u << n); ++bits) {
      if (static_cast<size_t>(__builtin_popcount(bits)) != count) continue;
      Lowering l = Lowering::none();
      for (size_t k = 0; k < n; ++k) l.*rows[k].field = (bits >> k) & 1;
      out.push_back(l);
    }
  return out;
}

const char* ir_name(Ir ir) { return ir == Ir::kRegister ? "register" : "stack"; }

std::optional<Ir> parse_ir(std::string_view name) {
  for (Ir ir : irs())
    if (name == ir_name(ir)) return ir;
  return std::nullopt;
}

std::vector<Ir> irs() { return {Ir::kStack, Ir::kRegister}; }

std::string ir_unavailable(Ir ir, Placement p) {
  if (ir == Ir::kStack || p == Placement::kSp) return "";
  return fmt::format("the register IR is built for the sp placement only, not {}: its instructions name frame slots and never "
                     "move the operand-stack pointer or a cached top, so another placement would differ only in the "
                     "stack-form instructions between them (use --placement sp, or --ir stack)",
                     placement_name(p));
}

std::string lowering_help() {
  std::string out = "the lowering's speed techniques: plain (none), ";
#define TECHNIQUE(name, help) out += std::string(#name) + " (" + help + "), ";
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  return out + "or a +-joined set of them in that order, e.g. " + lowering_name(Lowering{}) + " (every technique, the default)";
}

namespace {

constexpr Engine kEngines[] = {
#define DEFAULT EngineBuild::kDefault
#define COMPARED EngineBuild::kCompared
#define ALL EngineBuild::kAll
#define ENGINE(name, d, p, b, bounds, build) {#name, Dispatch::d, Placement::p, Budget::b, Bounds::bounds, &name##_op_words, &name##_built, &run_##name, &name##_register_ir, &name##_handler_signature, build},
#define NOT_GENERATED(d, p, why)
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
#undef NOT_GENERATED
#undef DEFAULT
#undef COMPARED
#undef ALL
};
struct Missing {
  Dispatch dispatch;
  Placement placement;
  const char* why;
};
constexpr Missing kNotGenerated[] = {
#define ENGINE(name, d, p, b, bounds, build)
#define NOT_GENERATED(d, p, why) {Dispatch::d, Placement::p, why},
#include "dispatchlab/interpreter/engines.def"
#undef ENGINE
#undef NOT_GENERATED
};

}  // namespace

std::vector<Dispatch> dispatch_modes() {
  std::vector<Dispatch> out;
  // A mode is in this build when one of its engines is (tail_pn needs preserve_none; CMake's stubs
  // of the engines a default build leaves out have no op words).
#define DISPATCH(name, enumerator, file, form, convention) \
  if (std::any_of(std::begin(kEngines), std::end(kEngines), [](const Engine& e) { return e.dispatch == Dispatch::enumerator && e.built(); })) \
    out.push_back(Dispatch::enumerator);
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  return out;
}

std::vector<Dispatch> every_dispatch_mode() {
  return {
#define DISPATCH(name, enumerator, file, form, convention) Dispatch::enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
  };
}

const Engine* runtime_impl::find_engine(Dispatch d, Placement p, Budget b, Bounds bounds) {
  for (const auto& e : kEngines)
    if (e.dispatch == d && e.placement == p && e.budget == b && e.bounds == bounds) return &e;
  return nullptr;
}

std::string engine_unavailable(Dispatch d, Placement p, Budget b, Bounds bounds) {
  for (const auto& n : kNotGenerated)
    if (n.dispatch == d && n.placement == p)
      return fmt::format("{} x {} is not built: {}", dispatch_name(d), placement_name(p), n.why);
  if (bounds == Bounds::kGuard) {
    if (std::string why = guard_pages::unavailable(); !why.empty()) return why;
    if (!find_engine(d, p, b, bounds)) {
      std::string rows;
      for (const auto& r : kEngines)
        if (r.bounds == bounds) rows += (rows.empty() ? "" : ", ") + std::string(r.name);
      return fmt::format("{} x {}{} with guard pages is not built (interpreter/include/dispatchlab/interpreter/engines.def has "
                         "the guard engines {}: each is one more compile of every handler)",
                         dispatch_name(d), placement_name(p), budget_bounded(b) ? fmt::format(" and the {} budget", budget_name(b)) : "",
                         rows.empty() ? "none" : rows);
    }
  }
  const Engine* e = find_engine(d, p, b, bounds);
  if (!e && budget_bounded(b)) {
    std::string rows;
    for (const auto& r : kEngines)
      if (r.budget == b) rows += (rows.empty() ? "" : ", ") + std::string(r.name);
    return fmt::format("{} x {} with the {} budget is not built (interpreter/include/dispatchlab/interpreter/engines.def has "
                       "{} budget engines {})",
                       dispatch_name(d), placement_name(p), budget_name(b), budget_name(b), rows.empty() ? "none" : rows);
  }
  if (!e) return fmt::format("{} x {} is not in interpreter/include/dispatchlab/interpreter/engines.def", dispatch_name(d), placement_name(p));
  if (!e->built()) {
    if (e->build == EngineBuild::kAll)
      return fmt::format("{} x {} is not built in this build: the one-function engines (switch, goto) beyond sp take "
                         "half a minute to minutes each to compile, so a default build leaves them out (configure with "
                         "-DDLAB_ALL_ENGINES=ON)",
                         dispatch_name(d), placement_name(p));
    if (e->build == EngineBuild::kCompared)
      return fmt::format("{} is not built in this build: it is one of the engines only the measurements compare (the "
                         "goto mode, the handler modes' placements beyond sp, fuel_machine, switch with a budget), which a default build "
                         "leaves out (configure with -DDLAB_COMPARED_ENGINES=ON; `just rfc`, `just models` and `just "
                         "test-compared` do)",
                         e->name);
    return fmt::format("dispatch mode {} needs clang's preserve_none (x86-64 or AArch64)", dispatch_name(d));
  }
  return "";
}

std::string ir_unavailable(Ir ir, Dispatch d, Placement p, Budget b, Bounds bounds) {
  if (std::string why = ir_unavailable(ir, p); !why.empty()) return why;
  const Engine* e = find_engine(d, p, b, bounds);
  if (ir == Ir::kStack || !e || e->register_ir()) return "";
  return fmt::format("the register IR's forms are not compiled into the {} engines of this build: in a one-function engine "
                     "(switch, goto) they multiply its compile time, so a default build leaves them out (configure with "
                     "-DDLAB_ONE_FUNCTION_REGISTER_IR=ON for the unbudgeted ones or -DDLAB_ALL_ENGINES=ON for all, or use "
                     "--dispatch tail or tail_pn)",
                     dispatch_name(d));
}

std::vector<EngineConfig> engine_configs() {
  std::vector<EngineConfig> out;
  for (const auto& e : kEngines) out.push_back({e.dispatch, e.placement, e.budget, e.bounds, Lowering{}});
  return out;
}

std::string engine_name(Dispatch d, Placement p, Budget b, Bounds bounds) {
  const Engine* e = find_engine(d, p, b, bounds);
  return e ? e->name : "";
}

std::string handler_signature(Dispatch d, Placement p, Budget b) {
  // Read from the engine's own handler type (machine.h): bounds do not change it.
  for (const Engine& e : kEngines)
    if (e.dispatch == d && e.placement == p && e.budget == b) return e.handler_signature();
  return "";
}

}  // namespace dlab::wasm
