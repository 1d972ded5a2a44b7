#include "runtime/guard_pages.h"

#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>
#include <string>

#include "engines/machine.h"

#if defined(__linux__) && UINTPTR_MAX == UINT64_MAX
#define DLW_GUARD_PAGES_SUPPORTED 1
#include <sys/mman.h>
#else
#define DLW_GUARD_PAGES_SUPPORTED 0
#endif

namespace dlab::wasm::guard_pages {

#if DLW_GUARD_PAGES_SUPPORTED

namespace {

// One per run on this thread, innermost first. initial-exec: the fault handler reads it, and a
// TLS access of that model is one load, no allocation or lock a signal could interrupt.
struct Scope {
  sigjmp_buf jump;
  Machine* m;
  Scope* outer;
};
__attribute__((tls_model("initial-exec"))) thread_local Scope* tl_scope = nullptr;

struct sigaction previous_segv;
std::once_flag installed;

// The fault is ours when this thread is running a guard engine (a scope) and the address lies in
// the reservation of the memory the machine is using: loads and stores only go through
// m->mem_base, so a fault anywhere else (a null pointer, a stack overflow, a bug) is not a trap
// and goes on to whoever handled SIGSEGV before (ASan, the default: a core dump).
void on_fault(int sig, siginfo_t* info, void* context) {
  Scope* s = tl_scope;
  if (s && s->m->mem_base) {
    auto addr = reinterpret_cast<uintptr_t>(info->si_addr), base = reinterpret_cast<uintptr_t>(s->m->mem_base);
    if (addr - base < kReservation) siglongjmp(s->jump, 1);
  }
  if (previous_segv.sa_flags & SA_SIGINFO) {
    previous_segv.sa_sigaction(sig, info, context);
    return;
  }
  if (previous_segv.sa_handler != SIG_DFL && previous_segv.sa_handler != SIG_IGN) {
    previous_segv.sa_handler(sig);
    return;
  }
  // The default action: with our handler gone, the faulting instruction runs again and kills.
  signal(sig, SIG_DFL);
}

void install() {
  std::call_once(installed, [] {
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault;
    sigemptyset(&sa.sa_mask);
    // SA_NODEFER: the handler leaves by siglongjmp, and sigsetjmp(…, 0) does not save the signal
    // mask (that would be a system call per invocation), so SIGSEGV must not be left blocked.
    // SA_ONSTACK: a handler's alternate stack (ASan's), where one is set up, is used.
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigaction(SIGSEGV, &sa, &previous_segv);
  });
}

}  // namespace

// Probed once: a process whose address space is limited (ulimit -v) cannot reserve 8 GiB, and
// then the guard engines are unavailable (run's default falls back to check) rather than failing
// at the first instantiation.
std::string unavailable() {
  static const std::string why = [] {
    uint8_t* p = reserve(0);
    if (!p)
      return "guard pages need " + std::to_string(kReservation >> 30) + " GiB of address space per memory, and this process cannot reserve it (" +
             std::strerror(errno) + "; a limit such as ulimit -v?): use --bounds check";
    release(p);
    return std::string();
  }();
  return why;
}

uint8_t* reserve(uint64_t bytes) {
  install();
  // PROT_NONE and MAP_NORESERVE: address space only, no memory and no commit charge until
  // commit makes pages accessible (and even then a page is backed only once touched).
  void* p = mmap(nullptr, kReservation, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  auto* base = static_cast<uint8_t*>(p);
  if (!commit(base, 0, bytes)) {
    int e = errno;
    munmap(p, kReservation);
    errno = e;
    return nullptr;
  }
  return base;
}

bool commit(uint8_t* base, uint64_t from, uint64_t to) {
  if (to <= from) return true;
  return mprotect(base + from, to - from, PROT_READ | PROT_WRITE) == 0;
}

void release(uint8_t* base) {
  if (base) munmap(base, kReservation);
}

void run(RunFn fn, const uint64_t* ip, uint64_t* sp, uint64_t* fp, Machine* m) {
  Scope s;
  s.m = m;
  s.outer = tl_scope;
  if (sigsetjmp(s.jump, 0) != 0) {
    // Back from a fault in a handler: nothing between here and it had anything to clean up.
    tl_scope = s.outer;
    m->trap = "out of bounds memory access";
    return;
  }
  tl_scope = &s;
  fn(ip, sp, fp, m);
  tl_scope = s.outer;
}

void* leave() noexcept {
  Scope* s = tl_scope;
  tl_scope = nullptr;
  return s;
}

void enter(void* scope) noexcept { tl_scope = static_cast<Scope*>(scope); }

#else

std::string unavailable() {
  return "guard pages need a 64-bit Linux target (an 8 GiB reservation per memory and a SIGSEGV handler); use --bounds check";
}
uint8_t* reserve(uint64_t) {
  errno = ENOSYS;
  return nullptr;
}
bool commit(uint8_t*, uint64_t, uint64_t) { return false; }
void release(uint8_t*) {}
void run(RunFn fn, const uint64_t* ip, uint64_t* sp, uint64_t* fp, Machine* m) { fn(ip, sp, fp, m); }
void* leave() noexcept { return nullptr; }
void enter(void*) noexcept {}

#endif

}  // namespace dlab::wasm::guard_pages
