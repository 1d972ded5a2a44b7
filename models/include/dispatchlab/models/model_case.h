// One point of a model grid: which generated handler set runs which program. Its name and
// parameters label result rows; `exec_args()` reproduces it in `dlab-model-exec`, the small
// program that cachegrind measures.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dispatchlab/models/models.h"

namespace dlab::models {

struct ModelCase {
  std::string model;     // kcopy_u, kcopy_p, kcopy_o, stack
  std::string placement;   // sp, vec, ...
  std::string dispatch;  // tail, tail_pn, goto, goto_nodup, switch
  int copies = 1;        // K for kcopy_*; copies per kind for stack
  Order order;           // kcopy only
  uint64_t seed = 1;
  size_t length = 0;     // kcopy elements or stack statements; 0 = the research's (models.h)

  bool is_kcopy() const { return model.rfind("kcopy_", 0) == 0; }
  size_t program_length() const;  // `length`, or the default for the model
  std::string name() const;  // "kcopy_u/sp/tail/K16/cyclic/L4096", "stack/sp_wt/tail/x16/s64"
  std::vector<DlInst> program() const;
  std::map<std::string, std::string> params() const;
  std::vector<std::string> exec_args() const;  // arguments for dlab-model-exec (without --reps)
  std::string kinds() const;  // "u", "c+b", "o", "c g s t b u l w S W"
};

// Cachegrind counts per event for `reps` extra repetitions of the case: the difference of runs of
// `exec` (dlab-model-exec) with 2*reps and reps repetitions, so start-up and driver costs cancel.
std::map<std::string, int64_t> cachegrind_counts(const ModelCase& c, const std::string& exec, uint64_t reps);

// Indirect-jump sites per generated file (dispatch_sites.tsv, written at build time), keyed
// "kcopy_u_sp_goto"; empty when the file is missing.
std::map<std::string, int> load_dispatch_sites(const std::string& path);

}  // namespace dlab::models
