// Cases counted under cachegrind (`--valgrind` of `dlab wasm bench`, with or without --calls):
// each case is a dlab command line for N repetitions, run with N and with 2N and the difference
// kept, so start-up, decoding and lowering cancel out and what remains is N repetitions' work.
// A case that can fork after its set-up makes both runs from one valgrind start-up.
// Deterministic: one sample per case.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/result_writer.h"

namespace dlab::bench {

struct CachegrindCase {
  std::string name;
  std::function<std::vector<std::string>(uint64_t repetitions)> argv;
  std::map<std::string, std::string> params;  // written into the case's rows
  std::string unit = "call";                  // what one repetition is
  std::string baseline;                       // the case its ratios pair with (empty: the first)
  uint64_t repetitions = 1;                   // N: the case runs with N and with 2N
  // When set, one command that counts both runs (the program forks after its set-up:
  // run_cachegrind_pair); else argv(N) and argv(2N) run as two processes.
  std::function<std::vector<std::string>(uint64_t repetitions)> pair_argv;
};

// How the cases run: `reuse`, when not empty, is a folder shared by the benches of one recipe
// run (`--valgrind-reuse DIR`): a case whose command line, dlab binary and input files are those
// of a case already counted there is read back instead of counted again, and its rows say so.
// `family_of`, when set, splits each case's counts by function as well (cachegrind's fn= names:
// the programs run unstripped) into <experiment>.functions.csv, each function with the family
// family_of gives its name ("" for none); not with `reuse`, whose files keep totals only.
struct CachegrindOptions {
  std::string reuse;
  std::function<std::string(const std::string& function)> family_of;
};

// Prints each case's instructions, loads, stores and simulated mispredicts per repetition and,
// with a run directory, writes <experiment>.summary.csv / .samples.csv / .json there.
void run_cachegrind_cases(const std::vector<CachegrindCase>& cases, const std::optional<RunDirectory>& dir, const std::string& experiment,
                          const CachegrindOptions& options = {});

}  // namespace dlab::bench
