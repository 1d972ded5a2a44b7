#include "dispatchlab/harness/command_record.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <utility>

namespace dlab {
namespace {

std::string environment(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string current_directory() {
  std::string buf(4096, '\0');
  while (::getcwd(buf.data(), buf.size()) == nullptr) {
    if (errno != ERANGE || buf.size() > (1u << 20)) return "";
    buf.resize(buf.size() * 2);
  }
  buf.resize(buf.find('\0'));
  return buf;
}

CommandRecord& stored() {
  static CommandRecord r;
  return r;
}

}  // namespace

CommandRecord CommandRecord::of_process(int argc, const char* const* argv) {
  CommandRecord r;
  for (int i = 0; i < argc; ++i) r.argv.emplace_back(argv[i] ? argv[i] : "");
  r.working_directory = current_directory();
  r.recipe = environment("DLAB_RECIPE");
  r.recipe_step = environment("DLAB_RECIPE_STEP");
  return r;
}

nlohmann::json CommandRecord::to_json() const {
  nlohmann::json j;
  j["argv"] = argv;
  j["working_directory"] = working_directory;
  j["recipe"] = recipe;
  j["recipe_step"] = recipe_step;
  if (argv.empty())
    j["note"] = "not recorded: the program that wrote this file did not set its command line";
  else if (recipe.empty())
    j["note"] = "run by hand (no DLAB_RECIPE in its environment): argv is the whole command";
  else
    j["note"] = "step " + (recipe_step.empty() ? std::string("(unnamed)") : recipe_step) + " of `just " + recipe + "`";
  return j;
}

void set_process_command(CommandRecord record) { stored() = std::move(record); }

const CommandRecord& process_command() { return stored(); }

}  // namespace dlab
