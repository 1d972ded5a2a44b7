#include "dispatchlab/harness/meter.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "dispatchlab/harness/quote.h"

namespace dlab {

struct Meter::Slot {
  const MetricMapping* mapping = nullptr;
  std::vector<std::string> input_names;  // formula names, in group order
  std::unique_ptr<CounterGroup> group;
  std::map<std::string, double> constants;
  std::string open_error;
};

namespace {
int nesting_rank(const std::string& backend) {
  // Outermost first: energy (a package-wide reading that updates once a millisecond, and for
  // powercap a file read) outside everything, then system-call based groups, the TSC innermost.
  if (backend == "perf_rapl" || backend == "powercap") return -1;
  if (backend == "perf_event") return 0;
  if (backend == "papi") return 1;
  if (backend == "tsc") return 2;
  return 3;
}
}  // namespace

Meter::Meter(const CounterPlan& plan, BackendSet& backends, const std::vector<std::string>& names) {
  for (const auto& c : plan.selected) {
    if (!names.empty() && std::find(names.begin(), names.end(), c.metric->name) == names.end()) continue;
    // Whole-process counters (cachegrind) cannot bracket a region: left out unless named.
    CounterBackend* owner = c.source ? backends.find(c.backend()) : nullptr;
    if (names.empty() && owner && !owner->in_process()) continue;
    MeteredMetric mm{c.metric->name, c.metric->unit, c.backend(), c.native_event(), c.metric->estimated, c.availability, c.encoding_name()};
    auto slot = std::make_unique<Slot>();
    if (c.availability.available) {
      slot->mapping = c.mapping;
      std::vector<std::string> events;
      for (const auto& [name, ev] : c.inputs()) {
        slot->input_names.push_back(name);
        events.push_back(ev);
      }
      CounterBackend* b = backends.find(c.backend());
      try {
        slot->group = b->open_group(events);
        slot->constants = b->constants();
      } catch (const CounterError& e) {
        // Available when probed alone but not now (too many groups for the counters, say).
        mm.availability = Availability::no(std::string("could not open with the other metrics: ") + e.what());
      }
    }
    metrics_.push_back(std::move(mm));
    slots_.push_back(std::move(slot));
  }
  for (const auto& n : names)
    if (std::none_of(metrics_.begin(), metrics_.end(), [&](const MeteredMetric& m) { return m.name == n; }))
      throw CounterError("unknown metric " + quote_input(n) + " (see `dlab counters`)");
  for (size_t i = 0; i < slots_.size(); ++i)
    if (slots_[i]->group) start_order_.push_back(i);
  std::sort(start_order_.begin(), start_order_.end(), [&](size_t a, size_t b) {
    int ra = nesting_rank(metrics_[a].backend), rb = nesting_rank(metrics_[b].backend);
    return ra != rb ? ra < rb : a < b;
  });
}

Meter::~Meter() = default;

std::vector<MetricValue> Meter::measure(const std::function<void()>& region) {
  for (size_t i : start_order_) slots_[i]->group->start();
  region();
  for (auto it = start_order_.rbegin(); it != start_order_.rend(); ++it) slots_[*it]->group->stop();

  std::vector<MetricValue> out(metrics_.size());
  for (size_t i = 0; i < metrics_.size(); ++i) {
    Slot& s = *slots_[i];
    MetricValue& v = out[i];
    if (!s.group) {
      v.reason = metrics_[i].availability.reason;
      continue;
    }
    auto readings = s.group->read();
    v.read_method = s.group->read_method();
    std::map<std::string, double> vars = s.constants;
    bool missing = false;
    for (size_t k = 0; k < readings.size(); ++k) {
      v.running_fraction = std::min(v.running_fraction, readings[k].running_fraction);
      if (readings[k].value) vars[s.input_names[k]] = *readings[k].value;
      else if (!missing) {
        missing = true;
        v.reason = readings[k].no_value_reason.empty() ? "counter never scheduled during the sample (time_running = 0)"
                                                       : readings[k].no_value_reason;
      }
    }
    if (missing) continue;
    if (s.mapping->formula) {
      v.value = s.mapping->formula->evaluate(vars);
      if (!v.value) v.reason = fmt::format("formula {} undefined for this sample (a zero denominator)", s.mapping->formula->text());
    } else {
      v.value = vars.at("value");
    }
  }
  return out;
}

}  // namespace dlab
