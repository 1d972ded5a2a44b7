// dlab-model-exec: runs one model case a given number of times and prints its checksum. It is
// what `dlab models --valgrind` runs under cachegrind (twice: N and 2N repetitions), kept small so
// that its own start-up is a small, exactly cancelled cost.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "dispatchlab/models/model_case.h"

int main(int argc, char** argv) {
  CLI::App app{"dlab-model-exec: run one model case (used under cachegrind by `dlab models --valgrind`)"};
  dlab::models::ModelCase c;
  std::string order = "cyclic";
  uint64_t reps = 1;
  app.add_option("--model", c.model, "kcopy_u, kcopy_p, kcopy_o or stack")->required();
  app.add_option("--placement", c.placement, "stack-state placement")->required();
  app.add_option("--dispatch", c.dispatch, "dispatch mode")->required();
  app.add_option("--copies", c.copies, "K, or copies per kind")->required();
  app.add_option("--order", order, "cyclic, random or blockN (kcopy)");
  app.add_option("--seed", c.seed, "program seed");
  app.add_option("--length", c.length, "kcopy elements or stack statements (0: default)");
  app.add_option("--reps", reps, "program repetitions");
  CLI11_PARSE(app, argc, argv);
  try {
    c.order = dlab::models::Order::parse(order);
    dlab::models::ModelInstance m(dlab::models::find_entry(c.model, c.placement, c.dispatch), c.program(), c.seed);
    m.run(reps);
    std::printf("%s checksum %016llx dispatches %zu\n", c.name().c_str(), static_cast<unsigned long long>(m.checksum()),
                m.dispatches_per_run() * reps);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "dlab-model-exec: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
