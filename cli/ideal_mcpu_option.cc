// --ideal-mcpu, shared by the commands that predict (cli/commands.h).
#include <stdexcept>

#include "cli/commands.h"

namespace dlab::cli {

CLI::Option* add_ideal_mcpu_option(CLI::App* cmd, std::string& target, const std::string& for_what) {
  return cmd
      ->add_option("--ideal-mcpu", target,
                   "with --predict: the ideal bound's CPU, llvm-mca-19's -mcpu (native: the CPU table's llvm-mca name for this "
                   "CPU, else the host as LLVM names it; none: no bound)" + for_what)
      ->capture_default_str();
}

predictors::McaCpu resolve_ideal_mcpu(const std::string& asked) {
  const CpuIdentity& id = this_machine().identity;
  try {
    return predictors::resolve_mca_cpu(asked, id.llvm_mcpu, id.llvm_model);
  } catch (const std::invalid_argument& e) {
    throw CLI::ValidationError("--ideal-mcpu", e.what());
  }
}

}  // namespace dlab::cli
