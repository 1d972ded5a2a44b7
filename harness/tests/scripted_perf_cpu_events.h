// Scripted perf_event system calls for the RAPL backend: opens succeed (or all fail with one
// errno); every read of an event on a CPU returns the next count of a linear ramp, as a RAPL
// counter that gains `step` counts between any two reads.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dispatchlab/harness/rapl_perf.h"

namespace dlab::testing {

struct PerfCpuScript {
  int open_errno = 0;                                // non-zero: every open fails with it
  std::map<int, std::pair<uint64_t, uint64_t>> ramp;  // cpu -> (first count, step per read)
  std::vector<std::string> log;                      // "open 14 0x2 cpu 0", "read cpu 0", "close cpu 0"
  int open_fds = 0;
};

class ScriptedPerfCpuEvents final : public PerfCpuEvents {
 public:
  explicit ScriptedPerfCpuEvents(std::shared_ptr<PerfCpuScript> s) : s_(std::move(s)) {}
  int open(uint32_t type, uint64_t config, int cpu) override {
    s_->log.push_back(fmt::format("open {} {:#x} cpu {}", type, config, cpu));
    if (s_->open_errno) return -s_->open_errno;
    int fd = next_fd_++;
    cpu_[fd] = cpu;
    ++s_->open_fds;
    return fd;
  }
  uint64_t read(int fd) override {
    int cpu = cpu_.at(fd);
    s_->log.push_back(fmt::format("read cpu {}", cpu));
    auto [first, step] = s_->ramp.at(cpu);
    return first + step * reads_[fd]++;
  }
  void close(int fd) override {
    s_->log.push_back(fmt::format("close cpu {}", cpu_.at(fd)));
    --s_->open_fds;
  }

 private:
  std::shared_ptr<PerfCpuScript> s_;
  std::map<int, int> cpu_;
  std::map<int, uint64_t> reads_;
  int next_fd_ = 100;
};

}  // namespace dlab::testing
