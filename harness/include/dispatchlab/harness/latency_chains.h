// Chains of dependent instructions: each operation needs the previous one's result, so a chain of
// N operations takes N x (the instruction's latency) core cycles whatever the core's width. They
// calibrate core cycles per TSC tick (tsc.h) and are what `dlab calibrate` checks that calibration
// against. Which chain has which latency on which core is data (harness/catalog/cpus.json).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dlab {

enum class LatencyChain {
  mul,         // x86-64: imul r64, r64 (3 cycles on every core since Core 2 and on every Zen);
               // arm64: mul x, x, x (2 or 3 cycles: the core's optimisation guide says which)
  add_reg,     // add of a register (1 cycle); no core folds it, unlike an immediate
  add_imm,     // add of an immediate (1 cycle by the book; Golden Cove-family cores fold chains of
               // them at rename, so this chain can run several adds per cycle)
  load,        // pointer chase through one L1-resident word: the load-to-use latency
  store_load,  // store a value, load it back, add 1: the store-forwarding round trip per operation
};

struct LatencyChainInfo {
  LatencyChain chain;
  std::string_view name;         // "mul", "add_reg", ... (what cpus.json and result rows call it)
  std::string_view instruction;  // the instruction(s) of one operation on this architecture
};

// Every chain, in the order above.
std::span<const LatencyChainInfo> latency_chains();
const LatencyChainInfo& latency_chain_info(LatencyChain chain);
std::optional<LatencyChain> latency_chain_named(std::string_view name);

// Operations one loop iteration of a chain runs (the loop counter is independent of the chain,
// so it runs beside it on another port and adds no latency).
inline constexpr uint64_t kChainOpsPerIteration = 32;

// Runs `iterations` x kChainOpsPerIteration dependent operations of `chain`. iterations >= 1.
void run_latency_chain(LatencyChain chain, uint64_t iterations);

// The same, bracketed by fenced TSC reads: the ticks the chain took.
uint64_t latency_chain_ticks(LatencyChain chain, uint64_t iterations);

}  // namespace dlab
