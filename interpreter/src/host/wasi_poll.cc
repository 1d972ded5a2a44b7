// poll_oneoff (clock and fd subscriptions; the two layouts of preview1 and snapshot0), the
// blocking read's wait, sched_yield, and the calls of a runtime without sockets or signals.
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "host/wasi_calls.h"

namespace dlab::wasm::wasi_impl {

bool host_clock(uint32_t id, clockid_t& out) {
  switch (id) {
    case kClockRealtime: out = CLOCK_REALTIME; return true;
    case kClockMonotonic: out = CLOCK_MONOTONIC; return true;
    case kClockProcessCputime: out = CLOCK_PROCESS_CPUTIME_ID; return true;
    case kClockThreadCputime: out = CLOCK_THREAD_CPUTIME_ID; return true;
    default: return false;
  }
}

namespace {

constexpr int kSliceMs = 10;  // how often a blocked call looks at the deadline
constexpr uint32_t kMaxSubscriptions = 1u << 16;

uint64_t now_ns(clockid_t c) {
  timespec ts{};
  ::clock_gettime(c, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

void wait_readable(WasiState& s, int host) {
  for (;;) {
    pollfd p{host, POLLIN, 0};
    int r = ::poll(&p, 1, s.has_deadline() ? kSliceMs : -1);
    if (r > 0 || (r < 0 && errno != EINTR)) return;  // ready, at end, or an error read(2) will report
    s.check_deadline();
  }
}

namespace {

struct Sub {
  uint64_t userdata = 0;
  uint8_t tag = 0;  // 0 clock, 1 fd_read, 2 fd_write
  // clock
  uint64_t wait_ns = 0;  // from the call's start
  // fd
  uint32_t fd = 0;
  int poll_index = -1;  // into the pollfd array, for an fd poll(2) waits on
  // Known at once (a bad fd or clock, a file that is always ready): the event's errno and bytes.
  bool immediate = false;
  uint16_t error = 0;
  uint64_t nbytes = 0;
};

void put_event(const Guest& g, uint32_t at, const Sub& s, uint16_t error, uint64_t nbytes, uint16_t flags) {
  std::memset(g.at(at), 0, 32);
  g.put_u64(at, s.userdata);
  g.put_u16(at + 8, error);
  g.put_u8(at + 10, s.tag);
  g.put_u64(at + 16, nbytes);
  g.put_u16(at + 24, flags);
}

void poll_oneoff(HostCall& hc, WasiState& s, Abi abi) {
  Guest g{hc.memory};
  uint32_t in = arg32(hc, 0), out = arg32(hc, 1), n = arg32(hc, 2), nevents = arg32(hc, 3);
  const uint32_t size = abi == Abi::kPreview1 ? 48 : 56;
  if (n == 0) return set(hc, kInval);
  if (n > kMaxSubscriptions) return set(hc, kNomem);  // the host's copy of them would be too big
  if (!g.ok(in, static_cast<uint64_t>(size) * n) || !g.ok(out, 32ull * n) || !g.ok(nevents, 4)) return set(hc, kFault);
  const WasiOptions& o = s.options;
  std::vector<Sub> subs(n);
  std::vector<pollfd> fds;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t at = in + i * size;
    Sub& sub = subs[i];
    sub.userdata = g.u64(at);
    sub.tag = *g.at(at + 8);
    if (sub.tag == 0) {
      // preview1: id u32 @16, timeout @24, precision @32, flags u16 @40;
      // snapshot0: identifier u64 @16, id u32 @24, timeout @32, precision @40, flags @48.
      uint32_t base = abi == Abi::kPreview1 ? at + 16 : at + 24;
      uint32_t id = g.u32(base);
      uint64_t timeout = g.u64(base + 8);
      bool absolute = g.u16(base + 24) & 1;
      clockid_t c;
      if (!host_clock(id, c)) {
        sub.immediate = true;
        sub.error = kInval;
        continue;
      }
      uint64_t now = o.fixed_clock_step_ns ? o.fixed_clock_now_ns : now_ns(c);
      sub.wait_ns = absolute ? (timeout > now ? timeout - now : 0) : timeout;
    } else if (sub.tag == 1 || sub.tag == 2) {
      sub.fd = g.u32(at + 16);
      uint32_t err;
      FdEntry* e = s.fds.get(sub.fd, kPollFdReadwrite, err);
      sub.immediate = true;
      if (!e) {
        sub.error = static_cast<uint16_t>(err);
      } else if (e->stream || e->filetype == kFtRegularFile || e->filetype == kFtDirectory || e->host < 0) {
        // Always ready: the streams are written through stdio, files never block. A file's
        // readable bytes are what lies past its offset.
        if (sub.tag == 1 && e->filetype == kFtRegularFile) {
          struct stat st{};
          off_t pos = ::lseek(e->host, 0, SEEK_CUR);
          if (::fstat(e->host, &st) == 0 && pos >= 0 && st.st_size > pos) sub.nbytes = static_cast<uint64_t>(st.st_size - pos);
        }
      } else {
        sub.immediate = false;
        sub.poll_index = static_cast<int>(fds.size());
        fds.push_back(pollfd{e->host, static_cast<short>(sub.tag == 1 ? POLLIN : POLLOUT), 0});
      }
    } else {
      return set(hc, kInval);
    }
  }
  bool any_immediate = std::any_of(subs.begin(), subs.end(), [](const Sub& x) { return x.immediate; });
  // The earliest clock: a fixed-step clock (--clock fixed:NS) never waits, it moves on by the
  // time the guest would have slept.
  uint64_t earliest = UINT64_MAX;
  for (const Sub& x : subs)
    if (x.tag == 0 && !x.immediate) earliest = std::min(earliest, x.wait_ns);
  const bool fixed = o.fixed_clock_step_ns != 0;
  const uint64_t start = now_ns(CLOCK_MONOTONIC);
  uint32_t count = 0;
  for (;;) {
    uint64_t elapsed = now_ns(CLOCK_MONOTONIC) - start;
    bool clock_due = earliest != UINT64_MAX && (fixed || elapsed >= earliest);
    int timeout_ms;  // this slice's wait
    if (any_immediate || clock_due) {
      timeout_ms = 0;
    } else if (earliest == UINT64_MAX) {
      timeout_ms = -1;
    } else {
      uint64_t left = earliest - elapsed;
      timeout_ms = static_cast<int>(std::min<uint64_t>((left + 999999) / 1000000, 1u << 30));
    }
    if (s.has_deadline() && (timeout_ms < 0 || timeout_ms > kSliceMs)) timeout_ms = kSliceMs;
    int r = fds.empty() ? 0 : ::poll(fds.data(), fds.size(), timeout_ms);
    if (fds.empty() && timeout_ms != 0) {
      timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
      ::nanosleep(&ts, nullptr);  // no fds: just the clock (an early wake-up loops)
    }
    if (r < 0 && errno != EINTR) return set(hc, errno_from_host(errno));
    elapsed = now_ns(CLOCK_MONOTONIC) - start;
    clock_due = earliest != UINT64_MAX && (fixed || elapsed >= earliest);
    bool fd_ready = r > 0;
    if (any_immediate || clock_due || fd_ready) {
      for (const Sub& x : subs) {
        uint32_t at = out + 32 * count;
        if (x.immediate) {
          put_event(g, at, x, x.error, x.nbytes, 0);
        } else if (x.tag == 0) {
          if (!clock_due || (fixed ? x.wait_ns != earliest : elapsed < x.wait_ns)) continue;
          put_event(g, at, x, 0, 0, 0);
        } else {
          short rev = fds[x.poll_index].revents;
          if (!rev) continue;
          uint16_t err = rev & POLLNVAL ? kBadf : 0;
          uint16_t flags = rev & POLLHUP ? 1 : 0;  // hangup
          int avail = 0;
          if (x.tag == 1 && (rev & POLLIN) && ::ioctl(fds[x.poll_index].fd, FIONREAD, &avail) != 0) avail = 0;
          put_event(g, at, x, err, static_cast<uint64_t>(std::max(avail, 0)), flags);
        }
        ++count;
      }
      if (fixed && clock_due)  // saturating: the next clock_time_get then says the clock ran out
        o.fixed_clock_now_ns = earliest > UINT64_MAX - o.fixed_clock_now_ns ? UINT64_MAX : o.fixed_clock_now_ns + earliest;
      g.put_u32(nevents, count);
      return set(hc, kSuccess);
    }
    s.check_deadline();
  }
}

void sched_yield_call(HostCall& hc, WasiState&, Abi) {
  ::sched_yield();
  set(hc, kSuccess);
}

// No sockets here: every fd the guest has is a file, directory or stream.
void sock_call(HostCall& hc, WasiState& s, Abi) { set(hc, s.fds.find(arg32(hc, 0)) ? kNotsock : kBadf); }

// No signals: preview1's proc_raise has no meaning in a runtime without them.
void proc_raise(HostCall& hc, WasiState&, Abi) { set(hc, kNosys); }

}  // namespace

void add_poll_calls(CallTable& t) {
  t["poll_oneoff"] = {"iiii:i", poll_oneoff};
  t["sched_yield"] = {":i", sched_yield_call};
  t["sock_accept"] = {"iii:i", sock_call};
  t["sock_recv"] = {"iiiiii:i", sock_call};
  t["sock_send"] = {"iiiii:i", sock_call};
  t["sock_shutdown"] = {"ii:i", sock_call};
  t["proc_raise"] = {"i:i", proc_raise};
}

}  // namespace dlab::wasm::wasi_impl
