// Linux perf_event backend: events encoded by libpfm4, opened with perf_event_open, read as a
// group (PERF_FORMAT_GROUP with time enabled/running, so multiplexing is visible and corrected),
// or through user-space rdpmc when the kernel allows it for every event of the group.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dispatchlab/harness/counter_backend.h"

struct perf_event_attr;

namespace dlab {

// Parses the buffer read(2) returns for a group leader opened with PERF_FORMAT_GROUP |
// PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID:
//   { nr, time_enabled, time_running, { value, id } x nr }.
// Readings come back in the order of `ids` (the order the events were opened in). Throws
// CounterError on a short or inconsistent buffer. Public so that recorded reads can be tested
// on machines without a PMU.
std::vector<CounterReading> parse_perf_group_read(std::span<const uint64_t> buffer,
                                                  std::span<const uint64_t> ids);

// Explains a failed perf_event_open in words a user can act on ("no hardware PMU: VM ...",
// "perf_event_paranoid=3 forbids ...").
std::string explain_perf_open_error(int err, const std::string& event, bool hardware_event);

class PerfEventBackend final : public CounterBackend {
 public:
  PerfEventBackend();
  std::string name() const override { return "perf_event"; }
  Availability probe(const std::string& native_event) override;
  std::unique_ptr<CounterGroup> open_group(const std::vector<std::string>& native_events) override;

  // Encodes a libpfm4 event name ("icl::MACHINE_CLEARS:MEMORY_ORDERING", "perf::TASK-CLOCK",
  // "perf_raw::r02a4") for counting in user space only. Throws CounterError when libpfm4 cannot.
  static void encode(const std::string& native_event, perf_event_attr& attr);
};

// libpfm4 set-up shared by the backend, the fingerprint and the catalog test. Sets
// LIBPFM_ENCODE_INACTIVE=1 first so that every catalog entry of this architecture encodes.
void ensure_libpfm_initialized();
// The core PMU libpfm4 detected from CPUID ("icx", "amd64_fam19h_zen3"), or "" when it knows none,
// plus its description.
struct DetectedPmu {
  std::string name;
  std::string description;
};
DetectedPmu detect_core_pmu();

}  // namespace dlab
