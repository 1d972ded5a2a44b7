// Peers of `dlab wasm bench`: other engines (V8 through node, wasm3, wasmtime...) run as whole
// processes on the workloads' WASI command module (kernels_cmd.wasm), whose output must end in
// "checksum XXXXXXXX". A peer is untrusted: it may never exit, print without end, print garbage or
// fail in one run of many; every run is checked, limited in time and output, and killed with its
// process group when dlab stops.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dispatchlab/harness/process.h"

namespace dlab::bench {

struct Peer {
  std::string name;
  std::vector<std::string> argv;  // with the placeholders {module} {workload} {size} {calls}
};

// NAME=COMMAND, each: the name letters, digits, '_' and '-', the command split on blanks (no
// shell). A malformed spec or a name given twice is a CLI::ValidationError for --peer.
std::vector<Peer> parse_peers(const std::vector<std::string>& specs);

// The argument vector of one run, placeholders replaced.
std::vector<std::string> peer_argv(const Peer& p, const std::string& module, const std::string& workload, uint32_t size,
                                   uint64_t calls);

// The checksum a run printed: exactly one line "checksum " and eight hex digits, nothing after it
// on that line. nullopt with the reason in `why` otherwise.
std::optional<uint32_t> parse_peer_checksum(const std::string& output, std::string& why);

// Whether the command module has `workload` (the command build leaves out what needs tail calls),
// decided by running the module in dlab itself with 0 calls: a peer's own exit status never decides
// it, so a failing peer cannot pass for a missing workload.
bool command_module_has(const std::string& command_module, const std::string& workload);

// Largest output kept from one peer run; past it the run is killed and reported.
inline constexpr size_t kPeerOutputLimit = 1 << 20;

// One run of a peer in its own process group, within `timeout_s`; stdout captured when asked.
// `working_directory` and `stdin_file` as ProcessOptions has them ("": dlab's folder, dlab's stdin).
ProcessResult run_peer(const std::vector<std::string>& argv, bool capture, double timeout_s, const std::string& working_directory = "",
                       const std::string& stdin_file = "");

// The program's peak resident memory in KiB as GNU time counts it (`/usr/bin/time -f %M`, Debian's
// `time`): time, about 1 MiB itself, forks and execs the program, so the count is the program's and
// at least time's own. A child forked from dlab would not do: it starts with dlab's pages resident,
// and the kernel's maxrss keeps them across exec. nullopt with the reason in `why` when GNU time is
// not there or the run fails. `working_directory` and `stdin_file` as run_peer's.
std::optional<long> peak_resident_kb(const std::vector<std::string>& argv, double timeout_s, std::string& why,
                                     const std::string& working_directory = "", const std::string& stdin_file = "");

// "peer NAME: ..." for a run that did not succeed, with the limit that ended it.
std::string describe_peer_failure(const Peer& p, const ProcessResult& r, double timeout_s);

}  // namespace dlab::bench
