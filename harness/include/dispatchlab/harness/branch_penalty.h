// What a mispredicted dispatch costs, measured without a PMU (issue 46, item 4): the same loop of
// indirect calls through a table of kTargets small functions, its targets read from one array of
// kSequenceLength indices, once in a pattern every predictor learns (a cycle of 4) and once drawn
// at random (each of kTargets equally likely, from a fixed seed). The two differ only in the
// indices' values: the same instructions, the same array read in the same order. So their cycles
// per call differ by the mispredicts the random one makes, times their penalty:
//
//   penalty = (random - pattern) / expected mispredicts per call,
//
// where a target drawn uniformly among kTargets is mispredicted at least (kTargets - 1) / kTargets
// of the time by any predictor (it cannot know the draw), and about that often by ITTAGE-class
// predictors on a sequence far longer than they can memorise (docs/predictors.md's random floor).
// That rate is an assumption, said wherever the penalty is written; the cycles are counted where
// a PMU counts them, else the TSC estimate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlab {

inline constexpr uint32_t kTargets = 16;
inline constexpr size_t kSequenceLength = size_t{1} << 20;  // 1 MiB of indices, read in order: streamed, not cached
inline constexpr uint32_t kPatternPeriod = 4;

enum class TargetOrder { pattern, random };

// The kSequenceLength indices of one order (each below kTargets).
std::vector<uint8_t> target_sequence(TargetOrder order);

// The mispredicts per call a predictor cannot avoid on the random order: (kTargets - 1) / kTargets.
double unavoidable_mispredict_rate();

// `calls` indirect calls through the table, the i-th to target sequence[i % size]; returns the
// value the calls computed (so that nothing is optimised away).
uint64_t run_indirect_calls(const std::vector<uint8_t>& sequence, uint64_t calls);

}  // namespace dlab
