#include "dispatchlab/harness/metric_catalog.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/harness/files.h"

namespace dlab {

extern const char* const kBuiltinMetricCatalogJson;  // generated from harness/catalog/metrics.json

std::string MetricMapping::describe() const {
  if (!counted()) return "";
  if (!formula) return inputs.at("value");
  std::string s;
  for (const auto& [name, event] : inputs) {
    if (!s.empty()) s += ", ";
    s += name + "=" + event;
  }
  return s + "; " + formula->text();
}

const MetricMapping* EventSource::find(const std::string& metric) const {
  for (const auto& m : mappings)
    if (m.metric == metric) return &m;
  return nullptr;
}

const MetricDef* MetricCatalog::metric(const std::string& name) const {
  for (const auto& m : metrics_)
    if (m.name == name) return &m;
  return nullptr;
}

const EventSource* MetricCatalog::source(const std::string& key) const {
  for (const auto& s : sources_)
    if (s.key == key) return &s;
  return nullptr;
}

const EventSource* MetricCatalog::pmu_source_for(const std::string& arch, const std::string& libpfm_pmu,
                                                 int family, int model) const {
  auto arch_ok = [&](const EventSource& s) { return s.os.empty() && (s.arch.empty() || s.arch == arch); };
  for (const auto& s : sources_)
    if (arch_ok(s))
      for (const auto& p : s.libpfm_pmus)
        if (p == libpfm_pmu) return &s;
  for (const auto& s : sources_)
    if (arch_ok(s))
      for (const auto& [f, m] : s.cpu_models)
        if (f == family && m == model) return &s;
  for (const auto& s : sources_)
    if (arch_ok(s) && s.fallback) return &s;
  return nullptr;
}

namespace {

MetricMapping parse_mapping(const std::string& metric, const nlohmann::json& j, const std::string& where) {
  MetricMapping m;
  m.metric = metric;
  if (j.is_string()) {
    m.inputs["value"] = j.get<std::string>();
    return m;
  }
  if (!j.is_object()) throw std::runtime_error(where + ": a mapping is a string or an object");
  m.note = j.value("note", "");
  if (j.contains("none")) {
    m.none_reason = j.at("none").get<std::string>();
    if (m.none_reason.empty()) throw std::runtime_error(where + ": 'none' needs a reason");
    return m;
  }
  if (!j.contains("inputs") || !j.contains("formula"))
    throw std::runtime_error(where + ": an object mapping needs 'inputs' and 'formula' (or 'none')");
  for (const auto& [name, ev] : j.at("inputs").items()) m.inputs[name] = ev.get<std::string>();
  for (const auto& name : j.value("backend_constants", std::vector<std::string>{})) m.backend_constants.insert(name);
  try {
    m.formula = Formula::parse(j.at("formula").get<std::string>());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(where + ": " + e.what());
  }
  return m;
}

}  // namespace

MetricCatalog MetricCatalog::from_json_text(const std::string& text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(fmt::format("{}: not valid JSON: {}", origin, e.what()));
  }
  MetricCatalog c;
  for (const auto& jm : doc.at("metrics")) {
    c.metrics_.push_back(MetricDef{jm.at("name"), jm.at("unit"), jm.at("description"), jm.value("estimated", false)});
  }
  for (const auto& js : doc.at("sources")) {
    EventSource s;
    s.key = js.at("key");
    s.backend = js.at("backend");
    s.arch = js.value("arch", "");
    s.os = js.value("os", "");
    s.vendor = js.value("vendor", "");
    s.fallback = js.value("fallback", false);
    s.note = js.value("note", "");
    if (js.contains("libpfm_pmus")) s.libpfm_pmus = js.at("libpfm_pmus").get<std::vector<std::string>>();
    for (const auto& fm : js.value("cpu_models", std::vector<std::string>{})) {
      int f = 0, m = 0;
      if (std::sscanf(fm.c_str(), "%d:%d", &f, &m) != 2)
        throw std::runtime_error(fmt::format("{}: source {}: cpu model '{}' is not family:model", origin, s.key, fm));
      s.cpu_models.emplace_back(f, m);
    }
    for (const auto& [metric, jmap] : js.at("events").items()) {
      std::string where = fmt::format("{}: source {}: metric {}", origin, s.key, metric);
      if (!c.metric(metric)) throw std::runtime_error(where + ": not a metric listed under 'metrics'");
      MetricMapping m = parse_mapping(metric, jmap, where);
      if (m.formula)
        for (const auto& name : m.formula->names())
          if (!m.inputs.count(name) && !m.backend_constants.count(name))
            throw std::runtime_error(fmt::format("{}: formula uses '{}', which is not an input", where, name));
      s.mappings.push_back(std::move(m));
    }
    if (c.source(s.key)) throw std::runtime_error(fmt::format("{}: source {} is listed twice", origin, s.key));
    c.sources_.push_back(std::move(s));
  }
  return c;
}

MetricCatalog MetricCatalog::from_file(const std::string& path) {
  std::string text = read_text_file(path);
  if (text.empty()) throw std::runtime_error("cannot read metric catalog " + path);
  return from_json_text(text, path);
}

const MetricCatalog& MetricCatalog::builtin() {
  static const MetricCatalog c = from_json_text(kBuiltinMetricCatalogJson, "builtin harness/catalog/metrics.json");
  return c;
}

}  // namespace dlab
