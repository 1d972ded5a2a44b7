#include "dispatchlab/harness/metric_catalog.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/quote.h"

namespace dlab {

extern const char* const kBuiltinMetricCatalogJson;  // generated from harness/catalog/metrics.json

const char* to_string(EventEncoding e) { return e == EventEncoding::raw ? "raw" : "libpfm4"; }

std::string MetricMapping::describe(EventEncoding e) const {
  if (!counted()) return "";
  const auto& in = inputs_for(e);
  if (in.size() != inputs.size()) return "";
  if (!formula) return in.at("value");
  std::string s;
  for (const auto& [name, event] : in) {
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

EventEncoding EventSource::encoding_for(const std::string& detected_libpfm_pmu) const {
  if (names_are_raw) return EventEncoding::raw;
  if (raw.empty()) return EventEncoding::libpfm4;
  for (const auto& p : libpfm_pmus)
    if (p == detected_libpfm_pmu) return EventEncoding::libpfm4;
  return EventEncoding::raw;
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

const EventSource* MetricCatalog::source_for_libpfm_pmu(const std::string& arch, const std::string& libpfm_pmu) const {
  if (libpfm_pmu.empty()) return nullptr;
  for (const auto& s : sources_)
    if (s.os.empty() && (s.arch.empty() || s.arch == arch))
      for (const auto& p : s.libpfm_pmus)
        if (p == libpfm_pmu) return &s;
  return nullptr;
}

const EventSource* MetricCatalog::fallback_source(const std::string& arch) const {
  for (const auto& s : sources_)
    if (s.fallback && s.os.empty() && (s.arch.empty() || s.arch == arch)) return &s;
  return nullptr;
}

bool MetricCatalog::is_hardware_metric(const std::string& metric) const {
  for (const auto& s : sources_)
    if (s.is_pmu_source() && s.find(metric)) return true;
  return false;
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
  m.scope = j.value("scope", "");
  if (j.contains("none")) {
    m.none_reason = j.at("none").get<std::string>();
    if (m.none_reason.empty()) throw std::runtime_error(where + ": 'none' needs a reason");
    return m;
  }
  if (j.contains("event")) {  // one event with a note or a scope
    if (j.contains("inputs") || j.contains("formula"))
      throw std::runtime_error(where + ": 'event' excludes 'inputs' and 'formula'");
    m.inputs["value"] = j.at("event").get<std::string>();
    return m;
  }
  if (!j.contains("inputs") || !j.contains("formula"))
    throw std::runtime_error(where + ": an object mapping needs 'inputs' and 'formula' (or 'event', or 'none')");
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
    c.metrics_.push_back(
        MetricDef{jm.at("name"), jm.at("unit"), jm.at("description"), jm.value("estimated", false), jm.value("note", "")});
  }
  for (const auto& js : doc.at("sources")) {
    EventSource s;
    s.key = js.at("key");
    s.backend = js.at("backend");
    s.arch = js.value("arch", "");
    s.os = js.value("os", "");
    s.vendor = js.value("vendor", "");
    s.fallback = js.value("fallback", false);
    s.energy = js.value("energy", false);
    s.note = js.value("note", "");
    if (js.contains("libpfm_pmus")) s.libpfm_pmus = js.at("libpfm_pmus").get<std::vector<std::string>>();
    if (js.contains("raw")) s.raw = js.at("raw").get<std::map<std::string, std::string>>();
    s.names_are_raw = js.at("backend") == "perf_event";  // until an input says otherwise
    for (const auto& [metric, jmap] : js.at("events").items()) {
      std::string where = fmt::format("{}: source {}: metric {}", origin, s.key, metric);
      if (!c.metric(metric)) throw std::runtime_error(where + ": not a metric listed under 'metrics'");
      MetricMapping m = parse_mapping(metric, jmap, where);
      if (m.formula)
        for (const auto& name : m.formula->names())
          if (!m.inputs.count(name) && !m.backend_constants.count(name))
            throw std::runtime_error(fmt::format("{}: formula uses {}, which is not an input", where, quote_input(name)));
      // Raw codes for the inputs: an input already raw (perf_raw::) or generic (perf::) is its own.
      if (m.counted())
        for (const auto& [name, ev] : m.inputs) {
          if (ev.rfind("perf_raw::", 0) == 0) m.raw_inputs[name] = ev;
          else s.names_are_raw = false;
          if (s.raw.empty() || ev.rfind("perf_raw::", 0) == 0) continue;
          if (ev.rfind("perf::", 0) == 0) m.raw_inputs[name] = ev;
          else if (auto it = s.raw.find(ev); it != s.raw.end()) m.raw_inputs[name] = it->second;
          else throw std::runtime_error(fmt::format("{}: {} has no raw code in the source's 'raw' table", where, quote_input(ev)));
        }
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
