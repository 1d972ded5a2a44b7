#include "dispatchlab/harness/latency_chains.h"

#include <array>

#include "dispatchlab/harness/tsc.h"

namespace dlab {

namespace {

#if defined(__x86_64__)
constexpr std::array<LatencyChainInfo, 5> kChains = {{
    {LatencyChain::mul, "mul", "imul r64, r64"},
    {LatencyChain::add_reg, "add_reg", "add r64, r64"},
    {LatencyChain::add_imm, "add_imm", "add r64, imm8"},
    {LatencyChain::load, "load", "mov r64, [r64]"},
    {LatencyChain::store_load, "store_load", "mov [m], r64; mov r64, [m]; add r64, 1"},
}};
#elif defined(__aarch64__)
constexpr std::array<LatencyChainInfo, 5> kChains = {{
    {LatencyChain::mul, "mul", "mul x, x, x"},
    {LatencyChain::add_reg, "add_reg", "add x, x, x"},
    {LatencyChain::add_imm, "add_imm", "add x, x, #1"},
    {LatencyChain::load, "load", "ldr x, [x]"},
    {LatencyChain::store_load, "store_load", "str x, [m]; ldr x, [m]; add x, x, #1"},
}};
#else
#error "dispatchlab's latency chains support x86-64 and arm64"
#endif

// The 32 operations of one iteration are written out with .rept so that the chain is exactly the
// instruction named above, with nothing a compiler could reorder, merge or vectorise.
#if defined(__x86_64__)
#define DLAB_CHAIN_LOOP(body) "1:\n\t.rept 32\n\t" body "\n\t.endr\n\tdec %[n]\n\tjnz 1b"
#else
#define DLAB_CHAIN_LOOP(body) "1:\n\t.rept 32\n\t" body "\n\t.endr\n\tsubs %x[n], %x[n], #1\n\tb.ne 1b"
#endif

void mul_chain(uint64_t n) {
  // An odd factor keeps the product odd, so the operands never collapse to 0 or 1 (no core is
  // known to have data-dependent multiply latency, but nothing here relies on that).
  uint64_t acc = 0x9e3779b97f4a7c15ull, k = 0xbf58476d1ce4e5b9ull;
#if defined(__x86_64__)
  asm volatile(DLAB_CHAIN_LOOP("imul %[k], %[acc]") : [acc] "+r"(acc), [n] "+r"(n) : [k] "r"(k) : "cc");
#else
  asm volatile(DLAB_CHAIN_LOOP("mul %x[acc], %x[acc], %x[k]") : [acc] "+r"(acc), [n] "+r"(n) : [k] "r"(k) : "cc");
#endif
}

void add_reg_chain(uint64_t n) {
  uint64_t acc = 0, one = 1;
#if defined(__x86_64__)
  asm volatile(DLAB_CHAIN_LOOP("add %[one], %[acc]") : [acc] "+r"(acc), [n] "+r"(n) : [one] "r"(one) : "cc");
#else
  asm volatile(DLAB_CHAIN_LOOP("add %x[acc], %x[acc], %x[one]") : [acc] "+r"(acc), [n] "+r"(n) : [one] "r"(one) : "cc");
#endif
}

void add_imm_chain(uint64_t n) {
  uint64_t acc = 0;
#if defined(__x86_64__)
  asm volatile(DLAB_CHAIN_LOOP("add $1, %[acc]") : [acc] "+r"(acc), [n] "+r"(n)::"cc");
#else
  asm volatile(DLAB_CHAIN_LOOP("add %x[acc], %x[acc], #1") : [acc] "+r"(acc), [n] "+r"(n)::"cc");
#endif
}

void load_chain(uint64_t n) {
  // One word holding its own address: every load's address is the previous load's result.
  alignas(64) static uintptr_t word;
  word = reinterpret_cast<uintptr_t>(&word);
  uintptr_t p = word;
#if defined(__x86_64__)
  asm volatile(DLAB_CHAIN_LOOP("mov (%[p]), %[p]") : [p] "+r"(p), [n] "+r"(n)::"cc", "memory");
#else
  asm volatile(DLAB_CHAIN_LOOP("ldr %x[p], [%x[p]]") : [p] "+r"(p), [n] "+r"(n)::"cc", "memory");
#endif
}

void store_load_chain(uint64_t n) {
  alignas(64) static uint64_t slot;
  uint64_t acc = 0;
  uint64_t* p = &slot;
#if defined(__x86_64__)
  asm volatile(DLAB_CHAIN_LOOP("mov %[acc], (%[p])\n\tmov (%[p]), %[acc]\n\tadd $1, %[acc]")
               : [acc] "+r"(acc), [n] "+r"(n)
               : [p] "r"(p)
               : "cc", "memory");
#else
  asm volatile(DLAB_CHAIN_LOOP("str %x[acc], [%x[p]]\n\tldr %x[acc], [%x[p]]\n\tadd %x[acc], %x[acc], #1")
               : [acc] "+r"(acc), [n] "+r"(n)
               : [p] "r"(p)
               : "cc", "memory");
#endif
}

#undef DLAB_CHAIN_LOOP

}  // namespace

std::span<const LatencyChainInfo> latency_chains() { return kChains; }

const LatencyChainInfo& latency_chain_info(LatencyChain chain) { return kChains.at(static_cast<size_t>(chain)); }

std::optional<LatencyChain> latency_chain_named(std::string_view name) {
  for (const auto& c : kChains)
    if (c.name == name) return c.chain;
  return std::nullopt;
}

void run_latency_chain(LatencyChain chain, uint64_t iterations) {
  // The loops decrement before testing: zero iterations would run 2^64 of them.
  if (iterations == 0) return;
  switch (chain) {
    case LatencyChain::mul: return mul_chain(iterations);
    case LatencyChain::add_reg: return add_reg_chain(iterations);
    case LatencyChain::add_imm: return add_imm_chain(iterations);
    case LatencyChain::load: return load_chain(iterations);
    case LatencyChain::store_load: return store_load_chain(iterations);
  }
}

uint64_t latency_chain_ticks(LatencyChain chain, uint64_t iterations) {
  uint64_t t0 = tsc_begin();
  run_latency_chain(chain, iterations);
  uint64_t t1 = tsc_end();
  return t1 - t0;
}

}  // namespace dlab
