#include "dispatchlab/probes/probe_report.h"

#include <atomic>
#include <functional>
#include <map>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "dispatchlab/probes/clang_runner.h"

namespace dlab::probes {

namespace {

// Runs fn(i) for i in [0, n) on all cores; each call is an independent compiler run.
// Runs fn(0..n-1) on every core. An exception in a worker stops the others taking new items and
// is rethrown on the calling thread after all have joined: none may escape a thread.
void parallel_for(size_t n, const std::function<void(size_t)>& fn) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<size_t> next{0};
  std::mutex failed_mutex;
  std::exception_ptr failed;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      try {
        for (size_t i = next++; i < n; i = next++) fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(failed_mutex);
        if (!failed) failed = std::current_exception();
        next = n;
      }
    });
  for (auto& th : pool) th.join();
  if (failed) std::rethrow_exception(failed);
}

std::string cell_escape(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

}  // namespace

const std::vector<std::string>& placement_kinds() {
  static const std::vector<std::string> k = {"c", "g", "s", "t", "b", "u", "l", "w", "S", "W"};
  return k;
}

std::vector<BudgetRow> run_register_budget(const std::vector<std::string>& targets, const std::vector<std::string>& conventions,
                                           int count, const std::vector<std::string>& shapes) {
  std::vector<BudgetRow> rows;
  for (const auto& t : targets)
    for (const auto& c : conventions)
      for (const auto& s : shapes) rows.push_back({s, {t, c, shape(s, s == "mixed" ? count / 2 : count), "", "", {}, {}, false}});
  parallel_for(rows.size(), [&](size_t i) {
    auto& r = rows[i].result;
    r = probe(r.triple, r.convention, r.signature);
  });
  return rows;
}

std::vector<HandlerPlacement> run_state_placement(const std::string& models_dir, const std::vector<std::string>& placements,
                                                  const std::vector<std::string>& targets,
                                                  const std::vector<std::string>& conventions) {
  struct Job {
    std::string v, t, c;
    std::vector<HandlerPlacement> out;
  };
  std::vector<Job> jobs;
  for (const auto& v : placements)
    for (const auto& t : targets)
      for (const auto& c : conventions) jobs.push_back({v, t, c, {}});
  parallel_for(jobs.size(), [&](size_t i) { jobs[i].out = state_placement(models_dir, jobs[i].v, jobs[i].t, jobs[i].c, placement_kinds()); });
  std::vector<HandlerPlacement> all;
  for (auto& j : jobs) all.insert(all.end(), j.out.begin(), j.out.end());
  return all;
}

ResultTable register_budget_table(const std::vector<BudgetRow>& rows, const std::string& compiler) {
  ResultTable t(result_table("register_budget"));
  for (const auto& row : rows) {
    const auto& r = row.result;
    bool ok = r.status == "ok";
    std::string live;
    for (const auto& l : r.mir.liveins) live += (live.empty() ? "" : " ") + l;
    t.add({{"target", r.triple}, {"convention", r.convention}, {"shape", row.shape}, {"signature", to_string(r.signature)},
           {"status", r.status}, {"int_in_registers", ok ? std::to_string(r.in_registers(false)) : ""},
           {"int_args", std::to_string(r.of_kind(false))}, {"float_in_registers", ok ? std::to_string(r.in_registers(true)) : ""},
           {"float_args", std::to_string(r.of_kind(true))}, {"registers", ok ? r.register_list() : ""},
           {"mir_liveins", ok ? live : ""}, {"mir_fixed_stack", ok ? std::to_string(r.mir.fixed_stack_objects) : ""},
           {"methods_agree", ok ? (r.methods_agree ? "1" : "0") : ""}, {"compiler", compiler}, {"note", r.note}});
  }
  return t;
}

ResultTable state_placement_table(const std::vector<HandlerPlacement>& rows, const std::string& compiler) {
  ResultTable t(result_table("state_placement"));
  for (const auto& h : rows) {
    bool ok = h.status == "ok";
    t.add({{"model", "stack1"}, {"placement", h.placement}, {"target", h.target}, {"convention", h.convention}, {"kind", h.kind},
           {"status", h.status}, {"instructions", ok ? std::to_string(h.instructions) : ""},
           {"callee_saved", ok ? std::to_string(h.callee_saved) : ""}, {"stack_accesses", ok ? std::to_string(h.stack_accesses) : ""},
           {"tail_jump", ok ? (h.tail_jump ? "1" : "0") : ""}, {"compiler", compiler}, {"note", h.note}});
  }
  return t;
}

std::string register_budget_markdown(const std::vector<BudgetRow>& rows, bool verbose) {
  std::vector<std::string> targets, conventions;
  std::map<std::tuple<std::string, std::string, std::string>, const ProbeResult*> at;
  for (const auto& row : rows) {
    const auto& r = row.result;
    if (std::find(targets.begin(), targets.end(), r.triple) == targets.end()) targets.push_back(r.triple);
    if (std::find(conventions.begin(), conventions.end(), r.convention) == conventions.end()) conventions.push_back(r.convention);
    at[{r.triple, r.convention, row.shape}] = &r;
  }
  std::string s = "Integer / float arguments that arrive in registers (of 24 each); in brackets the mixed signature "
                  "(12 integers and 12 floats alternating): positional conventions share one budget.\n\n| target |";
  for (const auto& c : conventions) s += " " + c + " |";
  s += "\n|---|";
  for (size_t i = 0; i < conventions.size(); ++i) s += "---|";
  s += "\n";
  std::vector<std::string> disagreements;
  for (const auto& t : targets) {
    s += "| " + t + " |";
    for (const auto& c : conventions) {
      auto get = [&](const char* shape) { auto it = at.find({t, c, shape}); return it == at.end() ? nullptr : it->second; };
      const ProbeResult *ints = get("ints"), *floats = get("floats"), *mixed = get("mixed");
      if (!ints || !floats || !mixed) {
        s += " |";
        continue;
      }
      if (ints->status != "ok") {
        s += " " + ints->status + " |";
        continue;
      }
      s += fmt::format(" {} / {} ({} + {}) |", ints->in_registers(false), floats->in_registers(true), mixed->in_registers(false),
                       mixed->in_registers(true));
      for (const auto* r : {ints, floats, mixed})
        if (r->status == "ok" && !r->methods_agree) disagreements.push_back(fmt::format("{} {}: {}", t, c, r->note));
    }
    s += "\n";
  }
  s += disagreements.empty() ? "\nBoth methods (assembly per argument; machine-IR live-ins and fixed stack objects) agree on every probe.\n"
                             : "\nDisagreements between the methods:\n\n";
  for (const auto& d : disagreements) s += "- " + d + "\n";
  for (const auto& row : rows)
    if (row.result.status == "ok" && row.result.indirect() > 0)
      s += fmt::format("\n{} {} ({}): {}.\n", row.result.triple, row.result.convention, row.shape, row.result.note);
  std::string ignored;
  for (const auto& row : rows)
    if (row.shape == "ints" && row.result.status != "ok")
      ignored += fmt::format("- {} {}: {} ({})\n", row.result.triple, row.result.convention, row.result.status, cell_escape(row.result.note));
  if (!ignored.empty()) s += "\nNot supported (clang's own words):\n\n" + ignored;
  if (verbose) {
    s += "\nRegisters per argument, in order ('-' = stack):\n\n| target | convention | shape | registers |\n|---|---|---|---|\n";
    for (const auto& row : rows)
      if (row.result.status == "ok")
        s += fmt::format("| {} | {} | {} | {} |\n", row.result.triple, row.result.convention, row.shape, row.result.register_list());
  }
  return s;
}

std::string state_placement_markdown(const std::vector<HandlerPlacement>& rows) {
  std::vector<std::string> placements, targets, conventions;
  struct Acc {
    int n = 0, ins = 0, stack = 0, saved = 0, no_tail = 0;
    std::string status = "ok", note;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Acc> acc;
  for (const auto& h : rows) {
    if (std::find(placements.begin(), placements.end(), h.placement) == placements.end()) placements.push_back(h.placement);
    if (std::find(targets.begin(), targets.end(), h.target) == targets.end()) targets.push_back(h.target);
    if (std::find(conventions.begin(), conventions.end(), h.convention) == conventions.end()) conventions.push_back(h.convention);
    Acc& a = acc[{h.placement, h.target, h.convention}];
    if (h.status != "ok") {
      a.status = h.status;
      a.note = h.note;
      continue;
    }
    ++a.n;
    a.ins += h.instructions;
    a.stack += h.stack_accesses;
    a.saved += h.callee_saved;
    a.no_tail += !h.tail_jump;
  }
  std::string s = "Per handler, averaged over the 10 kinds: instructions · stack-memory accesses · callee-saved "
                  "registers saved. \"no tail\" marks handlers that do not end in a jump; \"musttail impossible\" a "
                  "target that cannot pass the signature in a tail call.\n";
  for (const auto& c : conventions) {
    s += fmt::format("\n### convention: {}\n\n| placement |", c);
    for (const auto& t : targets) s += " " + t + " |";
    s += "\n|---|";
    for (size_t i = 0; i < targets.size(); ++i) s += "---|";
    s += "\n";
    for (const auto& v : placements) {
      s += "| " + v + " |";
      for (const auto& t : targets) {
        const Acc& a = acc[{v, t, c}];
        if (a.status == "ignored") s += " ignored |";
        else if (a.status != "ok") s += a.note.find("tail call") != std::string::npos ? " musttail impossible |" : " error |";
        else if (a.n == 0) s += " |";
        else
          s += fmt::format(" {:.1f} · {:.1f} · {:.1f}{} |", double(a.ins) / a.n, double(a.stack) / a.n, double(a.saved) / a.n,
                           a.no_tail ? " no tail" : "");
      }
      s += "\n";
    }
  }
  return s;
}

std::string fit_markdown(const std::vector<BudgetRow>& rows) {
  std::string s = "| target | convention | in registers | on the stack |\n|---|---|---|---|\n";
  for (const auto& row : rows) {
    const auto& r = row.result;
    if (r.status != "ok") {
      s += fmt::format("| {} | {} | {} | {} |\n", r.triple, r.convention, r.status, cell_escape(r.note));
      continue;
    }
    std::string spilled;
    for (size_t i = 0; i < r.args.size(); ++i)
      if (!r.args[i].in_register) spilled += fmt::format("{}a{}:{}", spilled.empty() ? "" : ", ", i, info(r.args[i].type).name);
    s += fmt::format("| {} | {} | {}/{} | {} |\n", r.triple, r.convention, r.args.size() - r.on_stack(), r.args.size(),
                     spilled.empty() ? "none" : spilled);
  }
  return s;
}

}  // namespace dlab::probes
