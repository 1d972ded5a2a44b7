#include "peers.h"

#include <unistd.h>

#include <cctype>
#include <charconv>
#include <filesystem>
#include <cstdio>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/commands.h"
#include "dispatchlab/harness/files.h"
#include "dispatchlab/harness/quote.h"
#include "dispatchlab/harness/temp_dir.h"
#include "dispatchlab/interpreter/module.h"
#include "dispatchlab/interpreter/runtime.h"
#include "dispatchlab/interpreter/validator.h"
#include "dispatchlab/interpreter/wasi.h"

namespace dlab::bench {

std::vector<Peer> parse_peers(const std::vector<std::string>& specs) {
  std::vector<Peer> peers;
  std::set<std::string> names;
  for (const auto& spec : specs) {
    auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) throw CLI::ValidationError("--peer", "'" + spec + "' is not NAME=COMMAND");
    Peer p{spec.substr(0, eq), cli::split_blanks(spec.substr(eq + 1))};
    for (char c : p.name)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-')
        throw CLI::ValidationError("--peer", "'" + p.name + "': a peer name is letters, digits, '_' and '-'");
    if (p.argv.empty()) throw CLI::ValidationError("--peer", p.name + ": an empty command");
    // Rows and the sidecar are keyed by the name: two peers with one name would mix.
    if (!names.insert(p.name).second) throw CLI::ValidationError("--peer", "the name '" + p.name + "' is given twice");
    peers.push_back(std::move(p));
  }
  return peers;
}

std::vector<std::string> peer_argv(const Peer& p, const std::string& module, const std::string& workload, uint32_t size,
                                   uint64_t calls) {
  std::vector<std::string> out;
  for (std::string a : p.argv) {
    for (auto [key, value] : {std::pair<std::string, std::string>{"{module}", module}, {"{workload}", workload},
                              {"{size}", std::to_string(size)}, {"{calls}", std::to_string(calls)}})
      for (size_t at = a.find(key); at != std::string::npos; at = a.find(key, at + value.size())) a.replace(at, key.size(), value);
    out.push_back(a);
  }
  return out;
}

std::optional<uint32_t> parse_peer_checksum(const std::string& output, std::string& why) {
  std::optional<uint32_t> found;
  size_t lines = 0;
  for (size_t at = 0; at < output.size();) {
    size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    std::string line = output.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("checksum", 0) != 0 || (line.size() > 8 && line[8] != ' ')) continue;  // not "checksums ...": a banner
    ++lines;
    bool ok = line.size() == 17 && line[8] == ' ';
    for (size_t i = 9; ok && i < 17; ++i) ok = std::isxdigit(static_cast<unsigned char>(line[i])) != 0;
    if (!ok) {
      // The peer's own bytes, escaped: a control sequence in them cannot reach the terminal.
      why = fmt::format("the line {} is not \"checksum\" and eight hex digits", quote_input(line.substr(0, 60)));
      return std::nullopt;
    }
    found = static_cast<uint32_t>(std::stoul(line.substr(9), nullptr, 16));
  }
  if (lines > 1) {
    why = fmt::format("{} checksum lines where the command module prints one", lines);
    return std::nullopt;
  }
  if (!found) why = "no checksum line in its output";
  return found;
}

bool command_module_has(const std::string& command_module, const std::string& workload) {
  std::string text = read_input_file(command_module);
  wasm::Module m = wasm::decode_valid_module(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  wasm::Runtime rt(wasm::EngineConfig{wasm::Dispatch::kSwitch, wasm::Placement::kSp});
  // Its "checksum 00000000" for 0 calls, and its usage text, go nowhere.
  std::FILE* null = std::fopen("/dev/null", "w");
  if (!null) throw std::runtime_error("cannot open /dev/null");
  wasm::WasiOptions wasi;
  wasi.args = {"kernels_cmd.wasm", workload, "1", "0"};
  wasi.out = wasi.err = null;
  int code = 0;
  try {
    wasm::register_wasi(rt, m, wasi);
    auto& inst = rt.instantiate(std::move(m));
    auto start = inst.exports.find("_start");
    if (start == inst.exports.end()) throw std::runtime_error(command_module + " has no _start: not a WASI command");
    rt.invoke(start->second.func, {});
  } catch (const wasm::ProcExit& e) {
    code = e.code();
  } catch (...) {
    std::fclose(null);
    throw;
  }
  std::fclose(null);
  // command_main.c: 3 is "no workload of that name in this build", 0 a run.
  if (code != 0 && code != 3) throw std::runtime_error(fmt::format("{} {} 1 0 exited with {} in dlab", command_module, workload, code));
  return code == 0;
}

std::optional<long> peak_resident_kb(const std::vector<std::string>& argv, double timeout_s, std::string& why,
                                     const std::string& working_directory, const std::string& stdin_file) {
  const char* kGnuTime = "/usr/bin/time";
  if (::access(kGnuTime, X_OK) != 0) {
    why = "GNU time is not installed (/usr/bin/time; Debian: apt-get install time, which ./tools/bootstrap does)";
    return std::nullopt;
  }
  TempDir scratch("peak-memory");
  // Absolute: the program may run in a working directory of its own (a relative TMPDIR would
  // otherwise put GNU time's report there).
  const std::string out = std::filesystem::absolute(scratch.file("max_rss_kb")).string();
  std::vector<std::string> timed = {kGnuTime, "-f", "%M", "-o", out};
  timed.insert(timed.end(), argv.begin(), argv.end());
  ProcessResult r = run_peer(timed, true, timeout_s, working_directory, stdin_file);
  if (!r.ok()) {
    why = r.describe("GNU time running the peer");
    return std::nullopt;
  }
  std::string text;
  try {
    text = read_text_file(out);
  } catch (const std::exception& e) {
    why = e.what();
    return std::nullopt;
  }
  // The file holds "%M" and a newline: the last line that is not empty.
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  const std::string line = text.substr(text.find_last_of('\n') == std::string::npos ? 0 : text.find_last_of('\n') + 1);
  long kb = 0;
  auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), kb);
  if (ec != std::errc() || end != line.data() + line.size() || kb <= 0) {
    why = "GNU time wrote " + quote_input(line) + ", not a size in KiB";
    return std::nullopt;
  }
  return kb;
}

ProcessResult run_peer(const std::vector<std::string>& argv, bool capture, double timeout_s, const std::string& working_directory,
                       const std::string& stdin_file) {
  ProcessOptions po;
  po.working_directory = working_directory;
  po.stdin_file = stdin_file;
  po.own_process_group = true;  // a timeout kills what the peer started too
  po.timeout_s = timeout_s;
  if (capture) {
    po.capture_stdout = true;
    po.max_output = kPeerOutputLimit;
    po.stderr_file = "/dev/null";
  } else {
    po.quiet = true;
  }
  return run_process(argv, po);
}

std::string describe_peer_failure(const Peer& p, const ProcessResult& r, double timeout_s) {
  if (r.timed_out) return fmt::format("peer {}: did not finish within {:g} s (--peer-timeout); killed", p.name, timeout_s);
  if (r.output_overflow) return fmt::format("peer {}: printed more than {} bytes; killed", p.name, kPeerOutputLimit);
  return fmt::format("peer {}: {}", p.name, r.describe(p.argv.front()));
}

}  // namespace dlab::bench
