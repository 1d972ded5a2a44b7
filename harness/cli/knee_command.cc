// `dlab knee`: fits flat / step / plateau models to two columns of a CSV file and reports where
// the metric changes, with its bootstrap range. The Python analysis calls this (one implementation).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>

#include "cli/commands.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/knee.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/result_writer.h"

namespace dlab::cli {

void add_knee_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("knee", "find where a metric steps up against live handler pairs (flat / step / plateau fits)");
  if (!command_selected(*cmd)) return;  // its options only when the command line names it
  struct Options {
    std::string csv, x = "x", y = "y";
    bool json = false;
    BootstrapOptions bootstrap;
  };
  auto o = std::make_shared<Options>();
  cmd->add_option("--csv", o->csv, "CSV file with a header")->required();
  cmd->add_option("--x", o->x, "column of the x values (handler pairs, copies)")->capture_default_str();
  cmd->add_option("--y", o->y, "column of the y values (one row per sample)")->capture_default_str();
  cmd->add_option("--seed", o->bootstrap.seed, "bootstrap seed")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON");
  cmd->callback([o] {
    std::vector<std::vector<std::string>> records;
    try {
      records = parse_csv_records(read_input_file(o->csv));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(fmt::format("{}: {}", o->csv, e.what()));
    }
    if (records.empty()) throw std::runtime_error(o->csv + ": empty (no header)");
    auto col = [&](const std::string& name) {
      for (size_t i = 0; i < records[0].size(); ++i)
        if (records[0][i] == name) return i;
      std::vector<std::string> columns;
      for (const auto& c : records[0]) columns.push_back(escape_input(c));
      throw std::runtime_error(fmt::format("{}: no column {} (columns: {})", o->csv, quote_input(name), fmt::join(columns, ", ")));
    };
    size_t xi = col(o->x), yi = col(o->y);
    std::vector<double> x, y;
    size_t empty = 0;
    // Record r is line r + 1 unless a quoted field spans lines.
    auto number = [&](size_t r, size_t c) {
      const std::string& t = records[r][c];
      double v = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (ec != std::errc() || end != t.data() + t.size())
        throw std::runtime_error(fmt::format("{}:{}: column {}: {} is not a number", o->csv, r + 1, quote_input(records[0][c]), quote_input(t)));
      if (!std::isfinite(v))
        throw std::runtime_error(fmt::format("{}:{}: column {}: {} is not a finite value", o->csv, r + 1, quote_input(records[0][c]), escape_input(t)));
      return v;
    };
    for (size_t r = 1; r < records.size(); ++r) {
      if (records[r].size() != records[0].size())
        throw std::runtime_error(fmt::format("{}:{}: {} fields, the header has {}", o->csv, r + 1, records[r].size(), records[0].size()));
      // An empty value is an unavailable metric (the result schema's rule): counted, not guessed.
      if (records[r][xi].empty() || records[r][yi].empty()) {
        ++empty;
        continue;
      }
      x.push_back(number(r, xi));
      y.push_back(number(r, yi));
    }
    if (x.size() < 3)
      throw std::runtime_error(fmt::format("{}: {} rows with both values ({} empty): a knee needs at least 3", o->csv, x.size(), empty));
    if (empty) fmt::print(stderr, "dlab knee: {} rows with an empty (unavailable) value skipped\n", empty);
    auto k = detect_knee(x, y, o->bootstrap);
    if (o->json) fmt::print("{}\n", k.to_json().dump(2));
    else fmt::print("{} ({} points, {} bootstrap resamples)\n", k.summary, x.size(), k.resamples);
  });
}

}  // namespace dlab::cli
