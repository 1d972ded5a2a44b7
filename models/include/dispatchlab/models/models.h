// The reduction models: the generated handler sets (models/generated, from models/spec/handlers.json),
// the programs they run, and a runner that executes a program and checks its result.
//
// Names of the axes (also in `dlab models --list`):
//   model    kcopy_u | kcopy_p | kcopy_o (K-copy reduction; o is the no-alias control) | stack
//   placement  where the stack height and top live (vec, sp, sp_wt, ... see handlers.json)
//   dispatch tail | tail_pn | goto | goto_nodup | switch
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "dispatchlab/models/model_abi.h"

namespace dlab::models {

struct ModelEntry {
  std::string model, placement, dispatch;
  DlEntry run;
  // The entry's function name in the binary (dl_run_<model>_<placement>_<dispatch>, as generated); a
  // literal: a std::string here made the registry's translation unit take 18 s instead of 11.
  const char* symbol;
  std::string convention() const;  // "preserve_none" or "default": the mode's, or the placement's (sp_wt_pn)
};
std::span<const ModelEntry> all_entries();
const ModelEntry& find_entry(const std::string& model, const std::string& placement, const std::string& dispatch);

struct KindLayout {
  std::string kind;
  uint32_t first_op;
  uint32_t copies;
};
std::vector<KindLayout> layout(const std::string& model);  // throws std::invalid_argument
uint32_t exit_op(const std::string& model);
uint32_t opcode(const std::string& model, const std::string& kind, uint32_t copy);

struct AxisDoc {
  std::string name, doc;
};
std::vector<AxisDoc> kind_docs();
std::vector<AxisDoc> placement_docs();
std::vector<AxisDoc> dispatch_docs();
// A dispatch mode's properties, read from its row in models/spec/handlers.json: code asks a mode
// these, never its name.
enum class DispatchForm {
  kTail,    // a function per handler, chained by musttail calls: each handler has code of its own
  kGoto,    // every handler in one function, threaded by computed goto
  kSwitch,  // one function, a switch in a loop: one shared indirect jump, a mode group's baseline
};
struct DispatchMode {
  std::string name;
  DispatchForm form;
  bool preserve_none;  // the handlers' calling convention (only a tail form makes calls)
  bool handlers_are_functions() const { return form == DispatchForm::kTail; }
  bool is_baseline() const { return form == DispatchForm::kSwitch; }
};
std::span<const DispatchMode> dispatch_modes();
const DispatchMode& dispatch_mode(const std::string& name);  // throws std::invalid_argument
std::vector<AxisDoc> model_docs();
// (model, placement, dispatch) combinations the spec excludes on purpose, with the reason.
struct NotGeneratedEntry {
  std::string model, placement, dispatch, why;
};
std::span<const NotGeneratedEntry> not_generated();
// Entries that are generated but that this build did not compile (CMake's DLAB_ALL_MODELS=OFF leaves
// out the stack machine's placements beyond sp in the one-function modes), each with why and how
// to build it; find_entry names the reason.
std::span<const NotGeneratedEntry> not_built();
// Whether an entry exists (find_entry throws with the reason when it does not).
bool has_entry(const std::string& model, const std::string& placement, const std::string& dispatch);

// Orders of the K-copy reduction: cyclic (0 1 2 .. K-1 0 1 ..), random (uniform, seeded), or
// blockN: the copies split into blocks of N; each visit to a block runs through its copies in
// order 16 times, then moves on, so only N copies (N handler pairs) are live at a time.
struct Order {
  enum Kind { kCyclic, kRandom, kBlock } kind = kCyclic;
  int block = 0;
  static Order parse(const std::string& s);  // "cyclic", "random", "block8"; throws std::invalid_argument
  std::string name() const;
};

// Program lengths of the research this reproduces: 4,096-element K-copy programs (its memdep
// bench) and 64-statement stack programs (its tos bench, ~450 dispatches). Both are short enough
// for an indirect-branch predictor to learn the dispatch sequence, which is the regime the models
// are about; much longer random programs are bound by mispredicted dispatches instead.
inline constexpr size_t kDefaultKCopyLength = 4096;
inline constexpr size_t kDefaultStackStatements = 64;

struct KCopyParams {
  char kind = 'u';  // u, p or o
  int copies = 1;
  Order order;
  uint64_t seed = 1;
  size_t length = kDefaultKCopyLength;  // K-copy elements per program (p has two dispatches per element)
};
std::string kcopy_model(char kind);  // "kcopy_u" ...
std::vector<DlInst> build_kcopy_program(const KCopyParams& p);
// Copy index sequence of an order (exposed for tests).
std::vector<uint32_t> order_sequence(const Order& o, int copies, size_t n, uint64_t seed);

struct StackParams {
  int copies = 16;        // copies per kind used (1..64)
  uint64_t seed = 1;
  size_t statements = kDefaultStackStatements;
};
std::vector<DlInst> build_stack_program(const StackParams& p);

// What a reader needs to judge how predictable a program's dispatches are: its dispatches per run,
// distinct handlers, and distinct handler pairs (consecutive dispatches, counting the exit
// handler's hand-back to the first instruction as the run repeats).
struct ProgramShape {
  size_t dispatches = 0, distinct_handlers = 0, distinct_pairs = 0;
};
ProgramShape program_shape(const std::vector<DlInst>& program);

// A program ready to run on one entry, with its own executor state (stack, locals, heap, own
// slots) seeded identically for every placement, so equal semantics give equal checksums.
class ModelInstance {
 public:
  ModelInstance(const ModelEntry& entry, std::vector<DlInst> program, uint64_t state_seed = 1);
  ~ModelInstance();
  ModelInstance(const ModelInstance&) = delete;
  ModelInstance& operator=(const ModelInstance&) = delete;

  // Runs the program `reps` times; folds each exit value into the checksum.
  void run(uint64_t reps);
  // Exit values, locals, heap and own slots folded together.
  uint64_t checksum() const;
  size_t dispatches_per_run() const { return program_.size(); }
  const ModelEntry& entry() const { return *entry_; }

 private:
  const ModelEntry* entry_;
  std::vector<DlInst> program_;
  std::vector<uint64_t> stack_, heap_, own_;
  DlExec ex_{};
  uint64_t exits_ = 0;
};

}  // namespace dlab::models
