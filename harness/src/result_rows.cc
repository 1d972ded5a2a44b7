#include "dispatchlab/harness/result_rows.h"

#include <stdexcept>
#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "dispatchlab/harness/command_record.h"
#include "dispatchlab/harness/result_schema.h"

namespace dlab {

std::string format_number(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {

std::string join_params(const std::map<std::string, std::string>& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : ";") + k + "=" + v;
  return s;
}

}  // namespace

std::map<std::string, std::string> provenance_columns(const RunResult& r, const MachineFingerprint& m) {
  return {{"protocol", r.protocol.name},
          {"pinned_cpu", r.pinned_cpu >= 0 ? std::to_string(r.pinned_cpu) : ""},
          {"warmup_rounds", std::to_string(r.protocol.warmup_rounds)},
          {"samples", std::to_string(r.rounds ? r.rounds : r.protocol.samples)},  // rounds taken (the adaptive rule may take more)
          {"interleaved", r.protocol.interleave ? "1" : "0"},
          {"pmu", m.pmu},
          {"uarch", m.identity.name},
          {"core", m.identity.core_of(r.pinned_cpu)},
          {"emulated", m.emulation.row_label()},
          {"compiler", m.build.compiler},
          {"build_type", m.build.build_type + " (" + m.build.preset + ")"},
          {"cxx_flags", m.build.cxx_flags},
          {"git_commit", m.build.git_commit}};
}

std::string params_column(const std::map<std::string, std::string>& p) { return join_params(p); }

namespace {

// Per-unit values of one metric across rounds; nullopt entries where a sample had no value.
std::vector<std::optional<double>> per_unit(const CaseSamples& vs, size_t metric, double units) {
  std::vector<std::optional<double>> out;
  for (const auto& s : vs.samples) {
    const auto& v = s[metric].value;
    out.push_back(v ? std::optional<double>(*v / units) : std::nullopt);
  }
  return out;
}

}  // namespace

ExperimentTables experiment_tables(const std::string& run_id, const std::string& experiment, const RunResult& result,
                                   const std::vector<MeasuredCase>& measured, const MachineFingerprint& machine) {
  ExperimentTables t;
  auto prov = provenance_columns(result, machine);
  for (size_t vi = 0; vi < result.cases.size(); ++vi) {
    const auto& vs = result.cases[vi];
    const MeasuredCase& var = measured.at(vi);
    size_t bi = 0;
    if (!var.baseline.empty()) {
      while (bi < measured.size() && measured[bi].name != var.baseline) ++bi;
      if (bi == measured.size()) throw std::logic_error("experiment_tables: " + var.name + "'s baseline " + var.baseline + " is not a case of the run");
    }
    const auto& base = result.cases.at(bi);
    for (size_t mi = 0; mi < result.metrics.size(); ++mi) {
      const auto& mm = result.metrics[mi];
      auto values = per_unit(vs, mi, var.units);
      std::vector<double> present;
      double running_min = 1;
      std::string reason;
      for (size_t s = 0; s < values.size(); ++s) {
        const MetricValue& raw = vs.samples[s][mi];
        running_min = std::min(running_min, raw.running_fraction);
        if (values[s]) present.push_back(*values[s]);
        else if (reason.empty()) reason = raw.reason;
        t.samples.add({{"run_id", run_id}, {"experiment", experiment}, {"case", vs.name}, {"metric", mm.name},
                       {"round", std::to_string(s)}, {"value", values[s] ? format_number(*values[s]) : ""},
                       {"running_fraction", values[s] ? format_number(raw.running_fraction) : ""}, {"read_method", raw.read_method}});
      }
      std::map<std::string, std::string> row = prov;
      row.insert({{"run_id", run_id}, {"experiment", experiment}, {"case", vs.name}, {"params", join_params(var.params)},
                  {"metric", mm.name}, {"unit", mm.unit + "/" + var.unit_name}, {"backend", mm.backend},
                  {"native_event", mm.native_event}, {"event_encoding", mm.encoding}, {"estimated", mm.estimated ? "1" : "0"},
                  {"baseline", base.name}});
      // A metric is summarised only when every round has a value: a partial set would silently
      // compare different rounds.
      if (!present.empty() && present.size() == values.size()) {
        Summary s = summarize(present, result.protocol.bootstrap);
        row.insert({{"n", std::to_string(s.n)}, {"median", format_number(s.median)}, {"min", format_number(s.min)},
                    {"mad", format_number(s.mad)}, {"ci95_lo", format_number(s.ci95_lo)}, {"ci95_hi", format_number(s.ci95_hi)},
                    {"running_fraction_min", format_number(running_min)}});
        auto base_values = per_unit(base, mi, measured.at(bi).units);
        bool base_complete = std::all_of(base_values.begin(), base_values.end(), [](auto& v) { return v.has_value(); });
        if (vi != bi && base_complete) {
          std::vector<double> b;
          for (auto& v : base_values) b.push_back(*v);
          Comparison c = compare_paired(present, b, result.protocol.bootstrap);
          row.insert({{"smaller_k", std::to_string(c.a_smaller)}, {"smaller_n", std::to_string(c.n)}});
          // A ratio against a zero baseline median (no page faults, say) is undefined: left empty.
          if (std::isfinite(c.ratio_of_medians))
            row.insert({{"ratio", format_number(c.ratio_of_medians)}, {"ratio_ci95_lo", format_number(c.ratio_ci95_lo)},
                        {"ratio_ci95_hi", format_number(c.ratio_ci95_hi)}});
        }
      } else {
        row["n"] = "0";
        row["unavailable_reason"] = !present.empty() ? "value missing in some rounds: " + reason
                                                     : (reason.empty() ? mm.availability.reason : reason);
      }
      t.summary.add(row);
    }
  }
  return t;
}

ResultTable counters_table(const CounterPlan& plan) {
  ResultTable t(result_table("counters"));
  for (const auto& c : plan.candidates) {
    const MetricCandidate* sel = plan.selection(c.metric->name);
    bool selected = sel && sel->source == c.source && sel->availability.available;
    t.add({{"metric", c.metric->name}, {"unit", c.metric->unit}, {"backend", c.backend()},
           {"source", c.source ? c.source->key : ""}, {"native_event", c.native_event()}, {"event_encoding", c.encoding_name()},
           {"selected", selected ? "1" : "0"}, {"available", c.availability.available ? "1" : "0"},
           {"estimated", c.metric->estimated ? "1" : "0"}, {"reason", c.availability.reason}});
  }
  return t;
}

nlohmann::json sidecar_json(const std::string& run_id, const MachineFingerprint& machine, const RunResult* result,
                            const std::vector<std::string>& tables) {
  nlohmann::json j;
  j["run_id"] = run_id;
  j["schema_version"] = kResultSchemaVersion;
  j["machine"] = machine.to_json();
  // The command and recipe step that made these files: what re-takes them.
  j["command"] = process_command().to_json();
  if (result) {
    j["protocol"] = result->protocol.to_json();
    j["pinned_cpu"] = result->pinned_cpu;
    j["pin_note"] = result->pin_note;
    nlohmann::json metrics = nlohmann::json::array();
    for (const auto& m : result->metrics)
      metrics.push_back({{"name", m.name}, {"backend", m.backend}, {"native_event", m.native_event}, {"event_encoding", m.encoding},
                         {"available", m.availability.available}, {"reason", m.availability.reason},
                         {"estimated", m.estimated}});
    j["metrics"] = metrics;
  }
  nlohmann::json schema = schema_json();
  nlohmann::json used = nlohmann::json::object();
  for (const auto& t : tables) used[t] = schema.at(t);
  j["schema"] = used;
  return j;
}

std::vector<std::string> experiment_files(const std::string& experiment) {
  return {experiment + ".samples.csv", experiment + ".summary.csv", experiment + ".json"};
}

void write_experiment(const RunDirectory& dir, const std::string& experiment, const ExperimentTables& t,
                      const nlohmann::json& sidecar, const std::vector<std::pair<std::string, std::string>>& extra) {
  // One set: the samples, the summary, any extra table and last the sidecar that describes them.
  std::vector<std::pair<std::string, std::string>> files = {{experiment + ".samples.csv", t.samples.to_csv()},
                                                            {experiment + ".summary.csv", t.summary.to_csv()}};
  files.insert(files.end(), extra.begin(), extra.end());
  files.push_back({experiment + ".json", sidecar.dump(2) + "\n"});
  write_files_atomically(dir.path(), files);
}

}  // namespace dlab
