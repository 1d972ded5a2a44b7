#include "model_generator.h"

#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/models/handler_name.h"

namespace dlab::models {

Spec Spec::from_json_text(const std::string& text) {
  auto j = nlohmann::json::parse(text);
  Spec s;
  for (const auto& k : j.at("kinds")) s.kinds.push_back({k.at("name"), k.at("doc"), k.at("body")});
  for (const auto& v : j.at("placements")) {
    VariantSpec vs{v.at("name"), v.at("height"), v.at("top"), v.at("doc")};
    vs.nr = v.value("nr", false);
    vs.pn = v.value("pn", false);
    vs.ni = v.value("ni", false);
    vs.sl = v.value("sl", false);
    if (vs.height != "mem" && vs.height != "arg" && vs.height != "spill")
      throw std::runtime_error("placement " + vs.name + ": height must be mem, arg or spill");
    if (vs.top != "mem" && vs.top != "wt" && vs.top != "wb" && vs.top != "flag")
      throw std::runtime_error("placement " + vs.name + ": top must be mem, wt, wb or flag");
    s.placements.push_back(vs);
  }
  for (const auto& d : j.at("dispatch_modes")) {
    DispatchSpec ds{d.at("name"), d.at("doc"), d.at("form"), d.at("convention"), d.value("flags", std::vector<std::string>{})};
    if (ds.form != "tail" && ds.form != "goto" && ds.form != "switch")
      throw std::runtime_error("dispatch mode " + ds.name + ": form must be tail, goto or switch");
    if (ds.convention != "default" && ds.convention != "preserve_none")
      throw std::runtime_error("dispatch mode " + ds.name + ": convention must be default or preserve_none");
    if (ds.convention != "default" && !ds.calls_between_handlers())
      throw std::runtime_error("dispatch mode " + ds.name + ": a calling convention other than the default needs the tail form");
    s.dispatch_modes.push_back(std::move(ds));
  }
  for (const auto& m : j.at("models")) {
    ModelSpec ms{m.at("name"), m.at("doc"), {}, m.at("placements"), m.at("dispatch")};
    for (const auto& [k, n] : m.at("kinds").items()) ms.kinds.emplace_back(k, n.get<int>());
    // nlohmann's object iterates keys sorted; keep that (deterministic) order.
    for (const auto& [k, n] : ms.kinds) {
      s.kind(k);
      if (n < 1 || n > 4096) throw std::runtime_error(fmt::format("model {}: kind {} has {} copies", ms.name, k, n));
    }
    for (const auto& v : ms.placements) s.placement(v);
    for (const auto& d : ms.dispatch) s.dispatch(d);
    for (const auto& ng : m.value("not_generated", nlohmann::json::array())) {
      std::string why = ng.at("why");
      if (why.empty()) throw std::runtime_error("model " + ms.name + ": a not_generated entry needs its reason");
      for (const std::string v : ng.at("placements"))
        for (const std::string d : ng.at("dispatch")) {
          s.placement(v);
          s.dispatch(d);
          ms.not_generated.push_back({v, d, why});
        }
    }
    // goto and switch hold the state in locals of one function: a placement defined by how an
    // argument is passed (past the register budget) has no meaning there and must be excluded.
    for (const auto& v : ms.placements)
      for (const auto& d : ms.dispatch)
        if (!s.dispatch(d).calls_between_handlers() && s.placement(v).height == "spill" && !ms.excluded(v, d))
          throw std::runtime_error(fmt::format("model {}: placement {} passes its height past the register budget, which "
                                               "{} dispatch (no calls) cannot express: list it under not_generated",
                                               ms.name, v, d));
    s.models.push_back(std::move(ms));
  }
  return s;
}

const NotGenerated* ModelSpec::excluded(const std::string& placement, const std::string& dispatch) const {
  for (const auto& n : not_generated)
    if (n.placement == placement && n.dispatch == dispatch) return &n;
  return nullptr;
}

template <class T>
static const T& find_named(const std::vector<T>& v, const std::string& n, const char* what) {
  for (const auto& x : v)
    if (x.name == n) return x;
  throw std::runtime_error(fmt::format("spec names unknown {} '{}'", what, n));
}
const KindSpec& Spec::kind(const std::string& n) const { return find_named(kinds, n, "kind"); }
const VariantSpec& Spec::placement(const std::string& n) const { return find_named(placements, n, "placement"); }
const DispatchSpec& Spec::dispatch(const std::string& n) const { return find_named(dispatch_modes, n, "dispatch mode"); }

unsigned long long copy_constant(const std::string& kind, int copy) {
  unsigned long long x = 0x9e3779b97f4a7c15ull * (static_cast<unsigned long long>(copy) + 1);
  for (char c : kind) x ^= static_cast<unsigned long long>(static_cast<unsigned char>(c)) << 17;
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x | 1;
}

namespace {

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
  return s;
}

std::string header(const std::string& spec_path, const std::string& what) {
  return fmt::format("// generated by models/generator/generate_models from {}, do not edit\n// {}\n", spec_path, what);
}

std::string entry_name(const std::string& model, const std::string& placement, const std::string& dispatch) {
  return fmt::format("dl_run_{}_{}_{}", model, placement, dispatch);
}

using dlab::models::handler_name;  // the one naming rule, shared with the ideal bound

std::string body_of(const Spec& spec, const std::string& kind, int copy) {
  std::string b = spec.kind(kind).body;
  b = replace_all(b, "DL_CONST", fmt::format("0x{:016x}ull", copy_constant(kind, copy)));
  b = replace_all(b, "DL_COPY", std::to_string(copy));
  return b;
}

std::string axes(const VariantSpec& v, const DispatchSpec& dispatch) {
  std::string s;
  auto def = [&](const char* n, bool on) { s += fmt::format("#define {} {}\n", n, on ? 1 : 0); };
  def("DL_HEIGHT_MEM", v.height == "mem");
  def("DL_HEIGHT_ARG", v.height == "arg");
  def("DL_HEIGHT_SPILL", v.height == "spill");
  def("DL_TOP_MEM", v.top == "mem");
  def("DL_TOP_WT", v.top == "wt");
  def("DL_TOP_WB", v.top == "wb");
  def("DL_TOP_FLAG", v.top == "flag");
  def("DL_NR", v.nr);
  def("DL_PN", v.pn || dispatch.convention == "preserve_none");
  def("DL_NI", v.ni);
  def("DL_SL", v.sl);
  def("DL_DISPATCH_TAIL", dispatch.form == "tail");
  def("DL_DISPATCH_GOTO", dispatch.form == "goto");
  def("DL_DISPATCH_SWITCH", dispatch.form == "switch");
  return s;
}

// The handlers of one model in tail-call form, written once and included by every placement's file
// (which defines the axes and DL_ENTRY first).
std::string tail_body(const Spec& spec, const ModelSpec& m) {
  std::string s = "\n";
  std::vector<std::string> names;
  for (const auto& [k, n] : m.kinds)
    for (int i = 0; i < n; ++i) names.push_back(handler_name(k, i));
  for (const auto& n : names) s += fmt::format("DL_HANDLER({});\n", n);
  s += "DL_HANDLER(h_exit);\n\n// Opcode i runs dl_table[i]; the exit handler is the last opcode.\nstatic const dl_handler dl_table[] = {\n";
  for (const auto& n : names) s += fmt::format("    {},\n", n);
  s += "    h_exit,\n};\n\n";
  for (const auto& [k, n] : m.kinds)
    for (int i = 0; i < n; ++i)
      s += fmt::format("DL_HANDLER({}) {{\n  {{ {} }}\n  DL_NEXT();\n}}\n\n", handler_name(k, i), body_of(spec, k, i));
  s += "DL_HANDLER(h_exit) { return DL_EXIT_VALUE; }\n\n";
  s += "extern \"C\" uint64_t DL_ENTRY(struct DlExec* ex, const struct DlInst* program) {\n"
       "  [[maybe_unused]] uint64_t ninst_ = dl_load_inst(program);\n"
       "  [[maybe_unused]] uint64_t h = 0, top = 0, valid = 0, pad0 = 0, pad1 = 0, pad2 = 0, pad3 = 0, pad4 = 0;\n"
       "  [[maybe_unused]] uint64_t* base = ex->base;\n"
       "  ex->len = 0;\n"
       "  return DL_FIRST_CALL;\n}\n";
  return s;
}

// The handlers of one model inside one function: computed goto (is_goto) or a switch loop.
std::string local_body(const Spec& spec, const ModelSpec& m, bool is_goto) {
  std::string s = "\n";
  s += "extern \"C\" uint64_t DL_ENTRY(struct DlExec* ex, const struct DlInst* program) {\n";
  s += "  [[maybe_unused]] uint64_t h = 0, top = 0, valid = 0;\n  [[maybe_unused]] uint64_t* base = ex->base;\n"
       "  const struct DlInst* ip = program;\n  [[maybe_unused]] uint64_t inst = dl_load_inst(ip);\n  ex->len = 0;\n";
  int op = 0;
  if (is_goto) {
    s += "  static const void* const dl_labels[] = {\n";
    for (const auto& [k, n] : m.kinds)
      for (int i = 0; i < n; ++i) s += fmt::format("      &&{},\n", handler_name(k, i));
    s += "      &&h_exit,\n  };\n  goto *dl_labels[(uint32_t)inst];\n";
    for (const auto& [k, n] : m.kinds)
      for (int i = 0; i < n; ++i)
        s += fmt::format("{}:\n  {{ {} }}\n  DL_NEXT_LOCAL();\n  goto *dl_labels[(uint32_t)inst];\n", handler_name(k, i),
                         body_of(spec, k, i));
    s += "h_exit:\n  return DL_EXIT_VALUE;\n}\n";
  } else {
    s += "  for (;;) {\n    switch ((uint32_t)inst) {\n";
    for (const auto& [k, n] : m.kinds)
      for (int i = 0; i < n; ++i)
        s += fmt::format("      case {}: {{ {} }}\n        DL_NEXT_LOCAL();\n        continue;\n", op++, body_of(spec, k, i));
    s += fmt::format("      case {}:\n        return DL_EXIT_VALUE;\n      default:\n        __builtin_unreachable();\n    }}\n  }}\n}}\n", op);
  }
  return s;
}

}  // namespace

std::map<std::string, std::string> generate(const Spec& spec, const std::string& spec_path) {
  std::map<std::string, std::string> out;
  std::string registry = header(spec_path, "every generated model entry point: DL_MODEL(model, placement, dispatch, entry)");
  std::string layout = header(spec_path,
                              "opcode layout per model: DL_KIND(model, kind, first_opcode, copies), DL_EXIT(model, opcode)");
  std::string docs = header(spec_path,
                            "documentation of the axes: DL_KIND_DOC(kind, doc), DL_PLACEMENT_DOC(name, height, top, nr, pn, ni, sl, "
                            "doc), DL_DISPATCH_DOC(name, form, convention, doc, flags), DL_MODEL_DOC(name, doc), DL_NOT_GENERATED(model, placement, "
                            "dispatch, why)");
  for (const auto& k : spec.kinds) docs += fmt::format("DL_KIND_DOC(\"{}\", \"{}\")\n", k.name, k.doc);
  for (const auto& v : spec.placements)
    docs += fmt::format("DL_PLACEMENT_DOC(\"{}\", \"{}\", \"{}\", {}, {}, {}, {}, \"{}\")\n", v.name, v.height, v.top, v.nr, v.pn,
                        v.ni, v.sl, v.doc);
  for (const auto& d : spec.dispatch_modes) {
    std::string flags;
    for (const auto& f : d.flags) flags += (flags.empty() ? "" : " ") + f;
    docs += fmt::format("DL_DISPATCH_DOC(\"{}\", \"{}\", \"{}\", \"{}\", \"{}\")\n", d.name, d.form, d.convention, d.doc, flags);
  }
  for (const auto& m : spec.models) {
    docs += fmt::format("DL_MODEL_DOC(\"{}\", \"{}\")\n", m.name, m.doc);
    for (const auto& n : m.not_generated)
      docs += fmt::format("DL_NOT_GENERATED(\"{}\", \"{}\", \"{}\", \"{}\")\n", m.name, n.placement, n.dispatch, n.why);
    int op = 0;
    for (const auto& [k, n] : m.kinds) {
      layout += fmt::format("DL_KIND(\"{}\", \"{}\", {}, {})\n", m.name, k, op, n);
      op += n;
    }
    layout += fmt::format("DL_EXIT(\"{}\", {})\n", m.name, op);
    // One body per model and dispatch form, written once; each placement x dispatch file sets the
    // axes and includes it (the placements differ only in the operand-location macros).
    for (const auto& d : m.dispatch) {
      const std::string& form = spec.dispatch(d).form;
      std::string inc = fmt::format("{}_{}.inc", m.name, form);
      if (!out.count(inc))
        out[inc] = header(spec_path, fmt::format("model {}, {} form: the handlers every {}_*_{}* file includes", m.name, form, m.name,
                                                 form == "tail" ? "tail" : form)) +
                   (form == "tail" ? tail_body(spec, m) : local_body(spec, m, form == "goto"));
      for (const auto& vn : m.placements) {
        if (m.excluded(vn, d)) continue;
        const auto& v = spec.placement(vn);
        std::string file = fmt::format("{}_{}_{}.cc", m.name, vn, d);
        std::string what = fmt::format("model {}, placement {}, dispatch {}: {}", m.name, vn, d, v.doc);
        out[file] = header(spec_path, what) + "\n" + axes(v, spec.dispatch(d)) + "#include \"placement_macros.h\"\n\n" +
                    fmt::format("#define DL_ENTRY {}\n#include \"{}\"\n", entry_name(m.name, vn, d), inc);
        registry += fmt::format("DL_MODEL(\"{}\", \"{}\", \"{}\", {})\n", m.name, vn, d, entry_name(m.name, vn, d));
      }
    }
  }
  out["model_registry.inc"] = registry;
  out["model_layout.inc"] = layout;
  out["model_docs.inc"] = docs;
  std::string cmake = "# generated by models/generator/generate_models from " + spec_path +
                      ", do not edit\n# the generated sources and, per dispatch mode, their extra compile flags\n"
                      "set(DLAB_GENERATED_MODEL_SOURCES\n";
  for (const auto& [f, c] : out)
    if (f.ends_with(".cc")) cmake += "  " + f + "\n";
  cmake += ")\n";
  std::string modes;
  for (const auto& d : spec.dispatch_modes) {
    std::string flags;
    for (const auto& f : d.flags) flags += (flags.empty() ? "" : ";") + f;
    cmake += fmt::format("set(DLAB_DISPATCH_FLAGS_{} \"{}\")\n", d.name, flags);
    modes += (modes.empty() ? "" : ";") + d.name;
  }
  cmake += fmt::format("set(DLAB_DISPATCH_MODES \"{}\")\n", modes);
  out["generated_sources.cmake"] = cmake;
  return out;
}

}  // namespace dlab::models
