// An engine of the interpreter as one value: its axes (how handlers dispatch, where the operand
// stack's pointer and top live, how an invocation is bounded, how memory accesses stay in bounds,
// and the lowering's techniques and IR), each a row of engines.def / lowerings.def (beside this
// header), and EngineConfig, the one value every command, child process, result row and test names
// an engine by: its name, whether this build and machine can run it (and why not), its result-row
// columns and its command-line arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dlab::wasm {

// How handlers reach each other, and where the operand-stack pointer (and a cached top of stack)
// lives between handlers: both axes are rows of engines.def (beside this header), which says what
// each mode and placement is, which pairs exist and why the others cannot. Axis names match the
// models' dispatch and state-placement axes (models/spec).
enum class Dispatch : uint8_t {
#define DISPATCH(name, enumerator, file, form, convention) enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef DISPATCH
};
const char* dispatch_name(Dispatch d);
// The calling convention of its handlers (the DISPATCH row's CONVENTION), as the probes name
// conventions: "default" or "preserve_none".
const char* dispatch_convention(Dispatch d);
// The shape of its dispatch (the DISPATCH row's FORM): one loop around a switch (LOOP), a function
// per handler ending in a tail call (HANDLERS), or one function with a computed goto per handler
// (THREADED). What code asks of a mode, instead of comparing its name.
enum class DispatchForm : uint8_t { kLoop, kHandlers, kThreaded };
DispatchForm dispatch_form(Dispatch d);
std::optional<Dispatch> parse_dispatch(std::string_view name);
// The modes this build has (tail_pn needs clang's preserve_none on x86-64 or AArch64; goto is an
// engine only the measurements compare, built with -DDLAB_COMPARED_ENGINES=ON).
std::vector<Dispatch> dispatch_modes();
// Every mode of engines.def, built or not: what an option accepts, so that a mode this build lacks
// is refused with why (engine_unavailable), not as an unknown word.
std::vector<Dispatch> every_dispatch_mode();

enum class Placement : uint8_t {
#define PLACEMENT(name, enumerator, sp, top) enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef PLACEMENT
};
const char* placement_name(Placement p);
std::optional<Placement> parse_placement(std::string_view name);
std::vector<Placement> placements();
// How an invocation is bounded (engines.def's BUDGET rows; interpreter/src/engines/budget.h): none, fuel
// (the counter a handler argument), fuel_machine (the counter in the machine), deadline (epochs).
enum class Budget : uint8_t {
#define BUDGET(name, enumerator, counter) enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BUDGET
};
const char* budget_name(Budget b);
// What a budget counts with (the BUDGET row's COUNTER): nothing (unbounded), fuel in a handler
// argument or in the machine, or the epochs of a deadline, which a host timer must bump. What code
// asks of a budget, instead of comparing its name: a new row of an existing kind needs no other change.
enum class BudgetCounter : uint8_t { kNone, kArg, kMachine, kEpoch };
BudgetCounter budget_counter(Budget b);
inline bool budget_bounded(Budget b) { return budget_counter(b) != BudgetCounter::kNone; }
// Fuel: `--fuel N` sets its amount.
inline bool budget_counts_fuel(Budget b) {
  return budget_counter(b) == BudgetCounter::kArg || budget_counter(b) == BudgetCounter::kMachine;
}
// A deadline: a host timer must bump the epoch while an invocation runs, and a deadline be set.
inline bool budget_needs_timer(Budget b) { return budget_counter(b) == BudgetCounter::kEpoch; }
std::optional<Budget> parse_budget(std::string_view name);
std::vector<Budget> budgets();
// Each budget and what its kind of counter does (engines.def's BUDGET rows), for --budget's help.
std::string budget_help();
// How a 32-bit memory's loads and stores stay in bounds (engines.def's BOUNDS rows): check (a
// compare per access) or guard (reserved, inaccessible address space past the memory's size, a
// fault becoming the trap: src/runtime/guard_pages.h). memory64 and the bulk instructions always check.
enum class Bounds : uint8_t {
#define BOUNDS(name, enumerator, how) enumerator,
#include "dispatchlab/interpreter/engines.def"
#undef BOUNDS
};
const char* bounds_name(Bounds b);
std::optional<Bounds> parse_bounds(std::string_view name);
std::vector<Bounds> bounds_list();
// "" when this build has the engine, else why not ("sp_spill is about how an argument is passed; ...").
std::string engine_unavailable(Dispatch d, Placement p, Budget b = Budget::kNone, Bounds bounds = Bounds::kCheck);
// The engine's name in engines.def ("tail_pn_fuel"), or "" when there is no such row.
std::string engine_name(Dispatch d, Placement p, Budget b = Budget::kNone, Bounds bounds = Bounds::kCheck);
// A tail-call handler's integer arguments in order, as `dlab probes fit --args` takes them
// ("ptr,ptr,ptr,ptr,u64"), from the engine's placement and budget rows (placement.h, budget.h
// write the same lists as C++ parameters); "" for switch and goto, whose handlers take none.
std::string handler_signature(Dispatch d, Placement p, Budget b);

// The lowering's speed techniques, each switchable (a lowering option, so every engine runs with
// any set of them; the peephole stage, interpreter/src/lower/peephole.cc, writes them):
//   fold  a const or local.get followed by the binop that consumes it becomes one instruction whose
//         second operand is its immediate / local slot (wasm3's operand-location variants)
//   fuse  an integer comparison followed by br_if, or by the branch an `if` lowers to, becomes one
//         compare-and-branch (the comparison's result never reaches a slot); i32.eqz before a
//         branch flips its sense instead
//   super a pair of consecutive instructions becomes one superinstruction (both bodies in one
//         handler), for the pairs tools/superinstructions.py chose from measured pair frequencies
// Named as a '+'-joined set, "plain" for none: "fold+fuse+super" is every technique (the default).
// The techniques are the rows of lowerings.def (beside this header): a field each.
//
// The IR is a second axis (`--ir`): stack, the operand-stack code every placement runs, or
// register, where each instruction names the frame slots of its operands and result (locals,
// stack temporaries at their static heights, constants folded in), so local.get / local.set /
// local.tee and most operand-stack traffic disappear and a result is written straight into the
// local that consumes it (wasmi's design). Instructions without a register form run in their stack
// form, with the stack pointer put where they expect it (src/lower/register_ir.cc). The register IR is built
// for the sp placement (every dispatch mode and budget): its instructions never move the stack
// pointer, so the other placements would differ only in the stack-form instructions between them.
enum class Ir : uint8_t { kStack, kRegister };
const char* ir_name(Ir ir);
std::optional<Ir> parse_ir(std::string_view name);
std::vector<Ir> irs();
// "" when the placement runs `ir`, else why not; with the engine, also whether this build compiled
// the register forms into it (a default build leaves them out of switch and goto: DLAB_ALL_ENGINES).
std::string ir_unavailable(Ir ir, Placement p);
std::string ir_unavailable(Ir ir, Dispatch d, Placement p, Budget b = Budget::kNone, Bounds bounds = Bounds::kCheck);
struct Lowering {
#define TECHNIQUE(name, help) bool name = true;
#include "dispatchlab/interpreter/lowerings.def"
#undef TECHNIQUE
  Ir ir = Ir::kStack;
  bool operator==(const Lowering&) const = default;
  static Lowering none();  // "plain"
};
std::string lowering_name(Lowering l);
std::optional<Lowering> parse_lowering(std::string_view name);
// Every set, "plain" first: the names `--lowering` accepts.
std::vector<Lowering> lowerings();
// --lowering's help: every technique with what it does, and how sets are named.
std::string lowering_help();


// One engine: every axis that changes the code that runs, and so what a measurement means.
struct EngineConfig {
  Dispatch dispatch = Dispatch::kTail;
  Placement placement = Placement::kSp;
  Budget budget = Budget::kNone;
  Bounds bounds = Bounds::kCheck;
  Lowering lowering{};  // the techniques and the IR
  bool operator==(const EngineConfig&) const = default;

  // The engines.def row that runs it ("tail_pn_fuel"), "" when there is none.
  std::string engine_name() const;
  // Every axis, in the order of params(): "tail_pn/sp/none/check/fold+fuse+super/stack".
  std::string name() const;
  // "" when this build and machine run it, else why not (engine_unavailable, then ir_unavailable).
  std::string unavailable() const;
  // The result rows' columns for it, in this order: dispatch, placement, budget, bounds,
  // lowering, ir (docs/results-schema.md).
  std::vector<std::pair<std::string, std::string>> params() const;
  // The arguments that select it in `dlab wasm run`, `profile`, `spec` and `bench`
  // (--dispatch D --placement P --budget B --bounds X --lowering L --ir I): how a parent passes
  // an engine to a child process (cachegrind's cases, the call path's children).
  std::vector<std::string> argv() const;
  // The same options back into a config: each value is a row's name; otherwise nullopt and
  // `error` says which option and what it takes.
  static std::optional<EngineConfig> parse(std::string_view dispatch, std::string_view placement, std::string_view budget,
                                           std::string_view bounds, std::string_view lowering, std::string_view ir,
                                           std::string* error = nullptr);
  // A tail-call handler's integer arguments (handler_signature), "" for switch and goto.
  std::string handler_signature() const;
};

// Every ENGINE row of engines.def with the default lowering, in its order.
std::vector<EngineConfig> engine_configs();

}  // namespace dlab::wasm
