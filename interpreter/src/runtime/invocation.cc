// Invocation: running a function on the runtime's engine and reading back its results (or its
// trap, or a suspension by the budget, and resuming it), the budgets' settings (fuel, the
// deadline and the epoch thread it needs), the counting engine's profile, and unwinding: the
// catch clause an exception lands on.
#include "dispatchlab/interpreter/runtime.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "engines/machine.h"
#include "engines/ops.h"
#include "gc/gc_heap.h"
#include "lower/lowering.h"
#include "runtime/guard_pages.h"

namespace dlab::wasm {

std::atomic<uint64_t> g_epoch{0};

namespace {
// The host timer of the deadline engines: one thread per process, adding one to g_epoch every
// Runtime::kEpochTickNs while any runtime has set a deadline (wasmtime leaves this to the
// embedder; here the runtime owns it, so `dlab wasm run --deadline` needs nothing else).
class EpochTicker {
 public:
  void acquire() {
    std::lock_guard lock(mu_);
    if (users_++ == 0) {
      stop_ = false;
      thread_ = std::thread([this] { tick(); });
    }
  }
  void release() {
    std::unique_lock lock(mu_);
    if (--users_ > 0) return;
    stop_ = true;
    lock.unlock();
    cv_.notify_all();
    thread_.join();
  }
  ~EpochTicker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void tick() {
    std::unique_lock lock(mu_);
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      next += std::chrono::nanoseconds(Runtime::kEpochTickNs);
      if (cv_.wait_until(lock, next, [this] { return stop_; })) break;
      g_epoch.fetch_add(1, std::memory_order_relaxed);
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread thread_;
  int users_ = 0;
  bool stop_ = false;
};
EpochTicker& epoch_ticker() {
  static EpochTicker ticker;
  return ticker;
}
}  // namespace

// A deadline's hold on the epoch thread ends with the runtime (set_deadline takes it).
Runtime::~Runtime() {
  if (deadline_ticker_) epoch_ticker().release();
}

// The payload's slots are still on the stack (roots) while the heap may collect.
ExnInst* make_exception(Machine* m, const TagInst* tag, const uint64_t* sp) noexcept {
  return m->heap->new_exception(tag, sp - tag->payload_slots, tag->payload_slots, sp);
}

// The host call of a handler (machine.h); the messages are those the handlers gave when it was inline.
const char* call_host(Machine* m, const FuncInst* f, uint64_t* sp, bool guard) noexcept {
  HostCall hc{sp - f->param_slots, m->instance && !m->instance->memories.empty() ? m->instance->memories[0] : nullptr};
  m->host_sp = sp;
  void* scope = guard ? guard_pages::leave() : nullptr;
  try {
    f->host(hc);
  } catch (const ProcExit& e) {  // from a nested invocation
    m->exited = true;
    m->exit_code = e.code();
    return "exit";
  } catch (const Trap& e) {  // a nested invocation's trap, unwound
    m->host_error = e.what();
    return m->host_error.c_str();
  } catch (const std::exception& e) {
    m->host_error = std::string("host function failed: ") + e.what();
    return m->host_error.c_str();
  } catch (...) {
    return "host function failed";
  }
  if (guard) guard_pages::enter(scope);
  if (hc.exit_code) {
    m->exited = true;
    m->exit_code = *hc.exit_code;
    return "exit";
  }
  return hc.trap;
}

// The innermost catch clause for `exn`: in the frame running `at` (the throwing instruction, or a
// caller's call instruction), then each caller's, down to where this invocation's frames begin.
// Popping a frame restores its caller's instance, as a return does.
Landing unwind(Machine* m, ExnInst* exn, const uint64_t* at, uint64_t* fp) noexcept {
  for (;;) {
    auto it = m->catch_code->upper_bound(at);
    if (it != m->catch_code->begin()) {
      const FuncInst* f = std::prev(it)->second;
      const uint64_t* code = f->code.data();
      if (at >= code && at < code + f->code.size()) {
        size_t pos = static_cast<size_t>(at - code);
        // Ranges in the order they begin: a nested one after its enclosing one, so innermost last.
        for (size_t k = f->catches.size(); k-- > 0;) {
          const CatchRange& r = f->catches[k];
          if (pos < r.begin || pos >= r.end) continue;
          for (const CatchClause& c : r.clauses) {
            if (c.tag && c.tag != exn->tag) continue;
            uint64_t* sp = fp + c.height;
            if (c.tag && !exn->payload.empty()) {  // (an empty payload's data() may be null: no memcpy)
              std::memcpy(sp, exn->payload.data(), exn->payload.size() * sizeof(uint64_t));
              sp += exn->payload.size();
            }
            if (c.ref) *sp++ = reinterpret_cast<uint64_t>(exn);
            return {code + c.target, sp, fp};
          }
        }
      }
    }
    if (m->frame_top == m->invoke_frames) break;
    CallFrame cf = *--m->frame_top;
    fp = cf.fp;
    if (cf.instance != m->instance) {
      m->instance = cf.instance;
      m->load_memory();
    }
    at = cf.return_ip - 1;  // inside the call instruction
  }
  m->exception = exn;
  return {nullptr, nullptr, nullptr};
}

void Runtime::set_fuel(uint64_t units) { machine_->fuel = units; }
uint64_t Runtime::fuel_left() const { return machine_->fuel; }
bool Runtime::suspended() const { return machine_->suspended; }

void Runtime::set_deadline(std::chrono::nanoseconds from_now) {
  // Only a deadline engine reads the epoch: no timer thread for the others.
  if (!deadline_ticker_ && budget_needs_timer(budget_)) {
    epoch_ticker().acquire();
    deadline_ticker_ = true;
  }
  // Whole epochs, one more than the quotient: the epoch may be about to tick when this is read,
  // so the deadline falls between from_now and from_now + one tick, never before.
  uint64_t ns = from_now.count() > 0 ? static_cast<uint64_t>(from_now.count()) : 0;
  machine_->deadline_epoch = g_epoch.load(std::memory_order_relaxed) + ns / kEpochTickNs + 1 + (ns % kEpochTickNs != 0);
}

void Runtime::clear_deadline() { machine_->deadline_epoch = ~0ull; }

void Runtime::enable_profile() {
  if (!instances_.empty()) throw std::logic_error("enable_profile must come before instantiation");
  constexpr size_t n = static_cast<size_t>(Op::kCount);
  op_counts_.assign(n, 0);
  pair_counts_.reset(static_cast<uint64_t*>(std::calloc(n * n, sizeof(uint64_t))));
  if (!pair_counts_) throw std::bad_alloc();
  machine_->op_counts = op_counts_.data();
  machine_->pair_counts = pair_counts_.get();
  op_words_ = tail_profile_op_words();
  run_ = &run_tail_profile;
}

Profile Runtime::profile() const {
  Profile p;
  constexpr size_t n = static_cast<size_t>(Op::kCount);
  for (size_t i = 0; i < n; ++i) {
    p.op_names.push_back(kOpNames[i]);
    p.op_families.push_back(op_family(i));
  }
  p.op_counts = op_counts_;
  for (uint64_t c : op_counts_) p.dispatches += c;
  if (!pair_counts_) return p;
  // A pair (a, b) was counted only after a ran: the rows of ops that never ran stay untouched.
  for (size_t a = 0; a < n; ++a) {
    if (op_counts_[a] == 0) continue;
    const uint64_t* row = pair_counts_.get() + a * n;
    for (size_t b = 0; b < n; ++b)
      if (row[b]) p.pairs.push_back({{static_cast<uint32_t>(a), static_cast<uint32_t>(b)}, row[b]});
  }
  return p;
}

void Runtime::FreeDeleter::operator()(uint64_t* p) const { std::free(p); }

std::vector<Value> Runtime::invoke(FuncInst* f, const std::vector<Value>& args) {
  if (args.size() != f->type.params.size())
    throw std::invalid_argument(fmt::format("expected {} arguments, got {}", f->type.params.size(), args.size()));
  Machine& m = *machine_;
  // Re-entrant: a host function that wasm code called may invoke again. The nested invocation
  // runs on the operand stack and call frames above its caller's (CALL_HOST records the caller's
  // stack top in m.host_sp), and the machine state the caller's handlers rely on (instance,
  // memory cache, frames, the `vec` placement's stack pointer, the counting engine's previous op)
  // is put back when it ends, however it ends; its trap or exit reaches the host function as a
  // Trap or ProcExit exception, which CALL_HOST turns into the caller's trap or exit.
  const bool nested = m.running;
  if (!nested) m.suspended = false;  // a suspended invocation is abandoned by a new one
  uint64_t* base = nested ? m.host_sp : m.stack.get() + 1;
  uint32_t arg_slots = 0;
  for (const Value& a : args) arg_slots += slots_of(a.type);
  if (base + arg_slots > m.stack_end) throw Trap("call stack exhausted");
  uint64_t* sp = base;
  for (size_t i = 0; i < args.size(); ++i) {
    // A reference argument's type is its kind only (the host cannot name a module's type index).
    bool same_kind = args[i].type == f->type.params[i] || (is_ref(args[i].type) && is_ref(f->type.params[i]));
    if (!same_kind) throw std::invalid_argument(fmt::format("argument {} has the wrong type", i));
    *sp++ = args[i].lo;
    if (args[i].type == ValType::kV128) *sp++ = args[i].hi;
  }
  // A two-instruction trampoline: call f, then halt; the call's frame returns to the halt. The
  // outermost invocation's is the runtime's, so that a suspended invocation can still return to it.
  const uint64_t* words = op_words_;
  uint64_t nested_entry[3];
  uint64_t* entry = nested ? nested_entry : trampoline_;
  entry[0] = words[static_cast<size_t>(Op::call)];
  entry[1] = reinterpret_cast<uint64_t>(f);
  entry[2] = words[static_cast<size_t>(Op::halt)];
  if (!nested) invoked_ = f;
  struct Restore {
    Machine& m;
    bool nested;
    Instance* instance = m.instance;
    MemoryInst* memory = m.memory;
    CallFrame* frame_top = m.frame_top;
    uint64_t* host_sp = m.host_sp;
    uint64_t* vsp = m.vsp;
    uint64_t last_op = m.last_op;
    CallFrame* invoke_frames = m.invoke_frames;
    // Handlers report failures through m.trap, never by throwing; should anything still unwind,
    // the runtime must not stay marked as running, or every later invoke would be taken as nested.
    ~Restore() {
      m.trap = nullptr;
      m.exited = false;
      m.exception = nullptr;
      if (!nested) {
        m.running = false;
        return;
      }
      m.instance = instance;
      m.use_memory(memory);
      m.frame_top = frame_top;
      m.host_sp = host_sp;
      m.vsp = vsp;
      m.last_op = last_op;
      m.invoke_frames = invoke_frames;
    }
  } restore{m, nested};
  m.trap = nullptr;
  m.exited = false;
  m.instance = nullptr;
  m.load_memory();
  if (!nested) m.frame_top = m.frames.get();
  m.invoke_frames = m.frame_top;  // an exception unwinds no further than this invocation's frames
  m.exception = nullptr;
  m.running = true;
  m.last_op = Machine::kNoPreviousOp;  // no pair spans two invocations
  run_engine(entry, sp, base);
  return finish(f, base, nested);
}

void Runtime::run_engine(const uint64_t* ip, uint64_t* sp, uint64_t* fp) {
  // A guard engine's out-of-bounds access faults; guard_pages::run turns the fault into the trap.
  if (bounds_ == Bounds::kGuard)
    guard_pages::run(run_, ip, sp, fp, machine_.get());
  else
    run_(ip, sp, fp, machine_.get());
}

std::vector<Value> Runtime::finish(FuncInst* f, const uint64_t* results, bool nested) {
  Machine& m = *machine_;
  if (m.exited) throw ProcExit(m.exit_code);
  if (m.exception) throw Exception(m.exception);
  if (m.suspended) {
    // Only the outermost invocation waits: a nested one's stack lies inside its caller's.
    if (!nested) throw Suspended(m.trap);
    m.suspended = false;
    throw Trap(m.trap);
  }
  if (m.trap) throw Trap(m.trap);
  std::vector<Value> out;
  const uint64_t* r = results;
  for (ValType t : f->type.results) {
    Value v{t, *r++, 0};
    if (t == ValType::kV128) v.hi = *r++;
    out.push_back(v);
  }
  return out;
}

std::vector<Value> Runtime::resume() {
  Machine& m = *machine_;
  if (m.running) throw std::logic_error("Runtime::resume during an invocation (only the outermost one can be resumed)");
  if (!m.suspended) throw std::logic_error("Runtime::resume: no invocation is suspended");
  m.suspended = false;
  m.trap = nullptr;
  m.exited = false;
  m.running = true;
  struct Done {
    Machine& m;
    ~Done() {
      m.trap = nullptr;
      m.exited = false;
      m.running = false;
    }
  } done{m};
  // The machine's instance, memory cache and frames are as the suspension left them.
  run_engine(m.resume_ip, m.resume_sp, m.resume_fp);
  return finish(invoked_, m.stack.get() + 1, false);
}

}  // namespace dlab::wasm
