// The model generator: one handler spec (models/spec/handlers.json) in, every model source out.
// Like CPython's cases generator, the generated files are committed; `generate_models --check`
// (run by ctest) fails when they no longer match the spec or this generator.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace dlab::models {

struct KindSpec {
  std::string name, doc, body;
};
struct VariantSpec {
  std::string name, height, top, doc;  // height: mem|arg|spill; top: mem|wt|wb|flag
  bool nr = false, pn = false, ni = false, sl = false;
};
struct DispatchSpec {
  std::string name, doc;
  std::string form;        // tail (a function per handler, musttail), goto (one function, computed goto), switch
  std::string convention;  // the handlers' calling convention: default or preserve_none
  std::vector<std::string> flags;  // extra compiler flags for files of this mode
  bool calls_between_handlers() const { return form == "tail"; }
};
// A (placement, dispatch) pair a model does not generate, and why: listed by `dlab models --list`
// and named in the error when asked for, never silently dropped.
struct NotGenerated {
  std::string placement, dispatch, why;
};
struct ModelSpec {
  std::string name, doc;
  std::vector<std::pair<std::string, int>> kinds;  // kind name, copies (opcode order)
  std::vector<std::string> placements, dispatch;
  std::vector<NotGenerated> not_generated;
  const NotGenerated* excluded(const std::string& placement, const std::string& dispatch) const;
};
struct Spec {
  std::vector<KindSpec> kinds;
  std::vector<VariantSpec> placements;
  std::vector<DispatchSpec> dispatch_modes;
  std::vector<ModelSpec> models;

  static Spec from_json_text(const std::string& text);  // throws std::runtime_error
  const KindSpec& kind(const std::string& n) const;
  const VariantSpec& placement(const std::string& n) const;
  const DispatchSpec& dispatch(const std::string& n) const;
};

// The copy's own constant: a splitmix64 hash of (kind, copy), odd, so no two copies share code.
unsigned long long copy_constant(const std::string& kind, int copy);

// File name -> content, for every file the spec generates. `spec_path` is named in the headers.
std::map<std::string, std::string> generate(const Spec& spec, const std::string& spec_path);

}  // namespace dlab::models
