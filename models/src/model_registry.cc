#include <algorithm>
#include <stdexcept>
#include <string_view>
#include <string>

#include "dispatchlab/models/models.h"

#define DL_MODEL(model, placement, dispatch, entry) extern "C" dl_u64 entry(DlExec*, const DlInst*);
#include "model_registry.inc"
#undef DL_MODEL

// The stems of the generated files this build leaves out (models/CMakeLists.txt, DLAB_ALL_MODELS and
// DLAB_COMPARED_ENGINES), and those of them a compared build has: their entries are stubs there
// (models_not_built.cc), never listed among the built ones.
#ifndef DLAB_MODELS_NOT_BUILT
#define DLAB_MODELS_NOT_BUILT " "
#endif
#ifndef DLAB_MODELS_COMPARED
#define DLAB_MODELS_COMPARED " "
#endif

namespace dlab::models {

namespace {
struct Registry {
  std::vector<ModelEntry> built;
  std::vector<NotGeneratedEntry> not_built;
};
const Registry& registry() {
  static const Registry r = [] {
    Registry r;
    const std::string left_out = DLAB_MODELS_NOT_BUILT, compared = DLAB_MODELS_COMPARED;
    auto listed = [](const std::string& stems, const char* entry) {
      return stems.find(" " + std::string(entry).substr(sizeof("dl_run_") - 1) + " ") != std::string::npos;
    };
#define DL_MODEL(model, placement, dispatch, entry)                                                                      \
  if (!listed(left_out, #entry))                                                                                      \
    r.built.push_back({model, placement, dispatch, &entry, #entry});                                                        \
  else if (listed(compared, #entry))                                                                                  \
    r.not_built.push_back({model, placement, dispatch,                                                                  \
                           "not built in this build: the K-copy models in goto and goto_nodup are built where the "   \
                           "goto engine is, with the engines only the measurements compare (configure with "          \
                           "-DDLAB_COMPARED_ENGINES=ON; `just rfc`, `just models` and `just test-compared` do)"});    \
  else                                                                                                                \
    r.not_built.push_back({model, placement, dispatch,                                                                  \
                           "not built in this build: the stack machine's placements beyond sp in the one-function "   \
                           "modes (goto, goto_nodup, switch) are left out of a default build to keep its compile "    \
                           "short (configure with -DDLAB_ALL_MODELS=ON; `just models` does)"});
#include "model_registry.inc"
#undef DL_MODEL
    return r;
  }();
  return r;
}
}  // namespace

std::span<const NotGeneratedEntry> not_built() { return registry().not_built; }

namespace {
bool placement_preserve_none(const std::string& placement);
}

std::string ModelEntry::convention() const {
  return dispatch_mode(dispatch).preserve_none || placement_preserve_none(placement) ? "preserve_none" : "default";
}

std::span<const ModelEntry> all_entries() { return registry().built; }

bool has_entry(const std::string& model, const std::string& placement, const std::string& dispatch) {
  for (const auto& e : all_entries())
    if (e.model == model && e.placement == placement && e.dispatch == dispatch) return true;
  return false;
}

const ModelEntry& find_entry(const std::string& model, const std::string& placement, const std::string& dispatch) {
  for (const auto& e : all_entries())
    if (e.model == model && e.placement == placement && e.dispatch == dispatch) return e;
  for (const auto& n : not_generated())
    if (n.model == model && n.placement == placement && n.dispatch == dispatch)
      throw std::invalid_argument("model " + model + "/" + placement + "/" + dispatch + " is not generated: " + n.why);
  for (const auto& n : not_built())
    if (n.model == model && n.placement == placement && n.dispatch == dispatch)
      throw std::invalid_argument("model " + model + "/" + placement + "/" + dispatch + " is " + n.why);
  throw std::invalid_argument("no generated model " + model + "/" + placement + "/" + dispatch +
                              " (see `dlab models --list`)");
}

namespace {
struct LayoutRow {
  const char* model;
  const char* kind;
  uint32_t first, copies;
};
struct ExitRow {
  const char* model;
  uint32_t op;
};
#define DL_KIND(model, kind, first, copies) {model, kind, first, copies},
#define DL_EXIT(model, op)
const LayoutRow kLayout[] = {
#include "model_layout.inc"
};
#undef DL_KIND
#undef DL_EXIT
#define DL_KIND(model, kind, first, copies)
#define DL_EXIT(model, op) {model, op},
const ExitRow kExit[] = {
#include "model_layout.inc"
};
#undef DL_KIND
#undef DL_EXIT
}  // namespace

std::vector<KindLayout> layout(const std::string& model) {
  std::vector<KindLayout> out;
  for (const auto& r : kLayout)
    if (model == r.model) out.push_back({r.kind, r.first, r.copies});
  if (out.empty()) throw std::invalid_argument("unknown model " + model);
  return out;
}

uint32_t exit_op(const std::string& model) {
  for (const auto& r : kExit)
    if (model == r.model) return r.op;
  throw std::invalid_argument("unknown model " + model);
}

uint32_t opcode(const std::string& model, const std::string& kind, uint32_t copy) {
  for (const auto& r : kLayout)
    if (model == r.model && kind == r.kind) {
      if (copy >= r.copies)
        throw std::invalid_argument("model " + model + " has " + std::to_string(r.copies) + " copies of kind " + kind);
      return r.first + copy;
    }
  throw std::invalid_argument("model " + model + " has no kind " + kind);
}

namespace {
struct Docs {
  std::vector<AxisDoc> kinds, placements, dispatch, models;
  std::vector<std::string> preserve_none_placements;
  std::vector<DispatchMode> modes;
  std::vector<NotGeneratedEntry> not_generated;
};
constexpr DispatchForm form_named(std::string_view form) {
  return form == "tail" ? DispatchForm::kTail : form == "goto" ? DispatchForm::kGoto : DispatchForm::kSwitch;
}
const Docs& docs() {
  static const Docs d = [] {
    Docs d;
#define DL_KIND_DOC(n, doc) d.kinds.push_back({n, doc});
#define DL_PLACEMENT_DOC(n, height, top, nr, pn, ni, sl, doc) \
  d.placements.push_back({n, doc});                          \
  if (pn) d.preserve_none_placements.push_back(n);
#define DL_DISPATCH_DOC(n, form, convention, doc, flags) \
  d.dispatch.push_back({n, doc});                        \
  d.modes.push_back({n, form_named(form), std::string_view(convention) == "preserve_none"});
#define DL_MODEL_DOC(n, doc) d.models.push_back({n, doc});
#define DL_NOT_GENERATED(model, placement, dispatch, why) d.not_generated.push_back({model, placement, dispatch, why});
#include "model_docs.inc"
#undef DL_NOT_GENERATED
#undef DL_KIND_DOC
#undef DL_PLACEMENT_DOC
#undef DL_DISPATCH_DOC
#undef DL_MODEL_DOC
    return d;
  }();
  return d;
}
}  // namespace

std::vector<AxisDoc> kind_docs() { return docs().kinds; }
std::vector<AxisDoc> placement_docs() { return docs().placements; }
std::vector<AxisDoc> dispatch_docs() { return docs().dispatch; }
std::span<const DispatchMode> dispatch_modes() { return docs().modes; }
const DispatchMode& dispatch_mode(const std::string& name) {
  for (const auto& m : docs().modes)
    if (m.name == name) return m;
  throw std::invalid_argument("unknown dispatch mode " + name);
}
namespace {
bool placement_preserve_none(const std::string& placement) {
  const auto& pn = docs().preserve_none_placements;
  return std::find(pn.begin(), pn.end(), placement) != pn.end();
}
}  // namespace
std::vector<AxisDoc> model_docs() { return docs().models; }
std::span<const NotGeneratedEntry> not_generated() { return docs().not_generated; }

}  // namespace dlab::models
