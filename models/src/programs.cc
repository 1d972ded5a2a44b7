#include <charconv>
#include <random>
#include <set>
#include <stdexcept>

#include "dispatchlab/models/models.h"

namespace dlab::models {

Order Order::parse(const std::string& s) {
  if (s == "cyclic") return {kCyclic, 0};
  if (s == "random") return {kRandom, 0};
  if (s.rfind("block", 0) == 0 && s.size() > 5) {
    int n = 0;
    auto [end, ec] = std::from_chars(s.data() + 5, s.data() + s.size(), n);
    if (ec != std::errc() || end != s.data() + s.size() || n < 1 || n > 512)
      throw std::invalid_argument("block size must be a number in 1..512: " + s);
    return {kBlock, n};
  }
  throw std::invalid_argument("unknown order '" + s + "' (cyclic, random, blockN)");
}

std::string Order::name() const {
  switch (kind) {
    case kCyclic: return "cyclic";
    case kRandom: return "random";
    case kBlock: return "block" + std::to_string(block);
  }
  return "?";
}

std::string kcopy_model(char kind) {
  if (kind != 'u' && kind != 'p' && kind != 'o') throw std::invalid_argument(std::string("K-copy kind must be u, p or o, not ") + kind);
  return std::string("kcopy_") + kind;
}

std::vector<uint32_t> order_sequence(const Order& o, int copies, size_t n, uint64_t seed) {
  std::vector<uint32_t> seq;
  seq.reserve(n);
  auto k = static_cast<uint32_t>(copies);
  if (o.kind == Order::kCyclic) {
    for (size_t i = 0; i < n; ++i) seq.push_back(static_cast<uint32_t>(i % k));
  } else if (o.kind == Order::kRandom) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<uint32_t> pick(0, k - 1);
    for (size_t i = 0; i < n; ++i) seq.push_back(pick(rng));
  } else {
    // Blocks of o.block copies (the last block may be shorter); 16 passes per visit.
    uint32_t b = static_cast<uint32_t>(o.block);
    while (seq.size() < n)
      for (uint32_t start = 0; start < k && seq.size() < n; start += b)
        for (int pass = 0; pass < 16 && seq.size() < n; ++pass)
          for (uint32_t c = start; c < std::min(start + b, k) && seq.size() < n; ++c) seq.push_back(c);
  }
  return seq;
}

std::vector<DlInst> build_kcopy_program(const KCopyParams& p) {
  std::string model = kcopy_model(p.kind);
  if (p.copies < 1) throw std::invalid_argument("copies must be at least 1");
  if (p.length < 1) throw std::invalid_argument("a K-copy program needs at least 1 element");
  auto seq = order_sequence(p.order, p.copies, p.length, p.seed);
  std::vector<DlInst> prog;
  prog.reserve(2 * p.length + 2);
  // A kind's copies are consecutive opcodes (layout()): its first is looked up once, and its last
  // once, which checks that the model has that many copies. Per element, the lookup by name made
  // most of dlab-model-exec's start-up, which lackey traced in full (`dlab models --predict` before dlabtrace).
  auto first = [&](const char* kind) {
    opcode(model, kind, static_cast<uint32_t>(p.copies - 1));
    return opcode(model, kind, 0);
  };
  if (p.kind != 'o') prog.push_back({opcode(model, "c", 0), 1});  // the start value
  const uint32_t u = p.kind == 'u' ? first("u") : 0, o = p.kind == 'o' ? first("o") : 0;
  const uint32_t c0 = p.kind == 'p' ? first("c") : 0, b0 = p.kind == 'p' ? first("b") : 0;
  for (uint32_t c : seq) {
    if (p.kind == 'u') {
      prog.push_back({u + c, 0});
    } else if (p.kind == 'o') {
      prog.push_back({o + c, 0});
    } else {
      prog.push_back({c0 + c, c});
      prog.push_back({b0 + c, 0});
    }
  }
  prog.push_back({exit_op(model), 0});
  return prog;
}

namespace {

// Random statements over 16 locals and a 1024-word heap; every statement leaves the stack empty
// and ends in a stack-emptying S or W, as a compiler's lowering would know.
class StackProgramBuilder {
 public:
  explicit StackProgramBuilder(const StackParams& p) : p_(p), rng_(p.seed) {
    if (p.copies < 1 || p.copies > 64) throw std::invalid_argument("stack model copies must be 1..64");
  }
  std::vector<DlInst> build() {
    for (size_t i = 0; i < p_.statements; ++i) statement();
    prog_.push_back({exit_op("stack"), 0});
    return std::move(prog_);
  }

 private:
  uint32_t rnd(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
  void emit(const char* kind, uint32_t imm) {
    prog_.push_back({opcode("stack", kind, rnd(static_cast<uint32_t>(p_.copies))), imm});
  }
  void expr(int depth) {
    uint32_t r = depth == 0 ? rnd(2) : rnd(6);
    switch (r) {
      case 0: emit("c", rnd(1u << 20)); break;
      case 1: emit("g", rnd(16)); break;
      case 2: expr(depth - 1); expr(depth - 1); emit("b", 0); break;
      case 3: expr(depth - 1); emit("u", 0); break;
      case 4: expr(depth - 1); emit("l", rnd(1024)); break;
      case 5: expr(depth - 1); emit("t", rnd(16)); break;
    }
  }
  void statement() {
    switch (rnd(4)) {
      case 0: expr(3); emit("S", rnd(16)); break;
      case 1: expr(2); expr(3); emit("W", rnd(1024)); break;
      case 2: expr(2); expr(2); emit("s", rnd(16)); emit("S", rnd(16)); break;
      case 3: expr(1); expr(2); expr(2); emit("w", rnd(1024)); emit("S", rnd(16)); break;
    }
  }
  StackParams p_;
  std::mt19937_64 rng_;
  std::vector<DlInst> prog_;
};

}  // namespace

std::vector<DlInst> build_stack_program(const StackParams& p) {
  if (p.statements < 1) throw std::invalid_argument("a stack program needs at least 1 statement");
  return StackProgramBuilder(p).build();
}

ProgramShape program_shape(const std::vector<DlInst>& program) {
  ProgramShape s;
  s.dispatches = program.size();
  std::set<uint32_t> ops;
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (size_t i = 0; i < program.size(); ++i) {
    ops.insert(program[i].op);
    pairs.emplace(program[i].op, program[(i + 1) % program.size()].op);
  }
  s.distinct_handlers = ops.size();
  s.distinct_pairs = pairs.size();
  return s;
}

}  // namespace dlab::models
