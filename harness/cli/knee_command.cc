// `dlab knee`: fits flat / step / plateau models to two columns of a CSV file and reports where
// the metric changes, with its bootstrap range. The Python analysis calls this (one implementation).
#include <fmt/format.h>

#include "commands.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/knee.h"
#include "dispatchlab/harness/result_writer.h"

namespace dlab::cli {

void add_knee_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("knee", "find where a metric steps up against live handler pairs (flat / step / plateau fits)");
  struct Options {
    std::string csv, x = "x", y = "y";
    bool json = false;
    BootstrapOptions bootstrap;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--csv", o->csv, "CSV file with a header")->required()->check(CLI::ExistingFile);
  cmd->add_option("--x", o->x, "column of the x values (handler pairs, copies)")->capture_default_str();
  cmd->add_option("--y", o->y, "column of the y values (one row per sample)")->capture_default_str();
  cmd->add_option("--seed", o->bootstrap.seed, "bootstrap seed")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] {
    auto records = parse_csv_records(read_text_file(o->csv));
    if (records.empty()) throw std::runtime_error(o->csv + ": empty");
    auto col = [&](const std::string& name) {
      for (size_t i = 0; i < records[0].size(); ++i)
        if (records[0][i] == name) return i;
      throw std::runtime_error(fmt::format("{}: no column '{}'", o->csv, name));
    };
    size_t xi = col(o->x), yi = col(o->y);
    std::vector<double> x, y;
    for (size_t r = 1; r < records.size(); ++r) {
      if (records[r].size() <= std::max(xi, yi) || records[r][xi].empty() || records[r][yi].empty()) continue;  // unavailable values
      x.push_back(std::stod(records[r][xi]));
      y.push_back(std::stod(records[r][yi]));
    }
    auto k = detect_knee(x, y, o->bootstrap);
    if (o->json) fmt::print("{}\n", k.to_json().dump(2));
    else fmt::print("{} ({} points, {} bootstrap resamples)\n", k.summary, x.size(), k.resamples);
  });
}

}  // namespace dlab::cli
