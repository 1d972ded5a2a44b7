// `dlab wasm bench --calls`: the cost of crossing into, out of and between wasm functions, per
// engine, under the run protocol (one interleaved group per kind of call, the first engine the
// baseline), in the bench's result schema (experiment <name>_calls).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/result_writer.h"
#include "dispatchlab/harness/run_protocol.h"
#include "dispatchlab/interpreter/runtime.h"
#include "bench_engine.h"

namespace dlab::bench {

// The two modules of the call path, generated here as bytes (this Debian's wat2wasm predates the
// typed-function-references text syntax that call_ref needs). The peer exports `inc`; the calls
// module imports env.host_nop (a host function) and env.peer_inc (the peer instance's inc) and
// exports nop, args4 and the loops loop_host, loop_call, loop_indirect, loop_ref and loop_import,
// each (i32 n) -> (i32): n calls of its kind, returning n (loop_host: 0).
std::vector<uint8_t> call_path_module();
std::vector<uint8_t> call_peer_module();

// The kinds of call, as the groups and cases name them (host_to_wasm_nop, ..., wasm_call, ...).
std::vector<std::string> call_path_kinds();
// The child process of `--calls --valgrind`: in engine `e`, `repetitions` calls of one kind (a
// loop kind: one invocation of its loop with that many iterations), and nothing else.
void run_call_path_child(const BenchEngine& e, const std::string& kind, uint32_t repetitions);

// Runs every group in every engine (each checked first: every loop must return what it should)
// and writes <experiment>.summary.csv / .samples.csv / .json into `dir` when there is one.
void run_call_path(const std::vector<BenchEngine>& engines, const RunProtocol& protocol, bool quick,
                   const std::optional<RunDirectory>& dir, const std::string& experiment);

}  // namespace dlab::bench
