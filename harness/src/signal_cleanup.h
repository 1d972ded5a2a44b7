// What an interrupted dlab must not leave behind: scratch folders (temp_dir.h) and the process
// groups of children it started in groups of their own (process.h). On SIGINT, SIGTERM or SIGHUP
// a handler removes every registered folder and kills every registered group, then lets the signal
// take its default course (or the one it had before). Fixed storage, no allocation: the handler
// calls only async-signal-safe functions. (SIGKILL cannot be caught: a child still dies with dlab
// through PR_SET_PDEATHSIG, its own children do not.)
#pragma once

#include <sys/types.h>

namespace dlab::internal {

// A slot number for the remove_* call, or -1 when every slot is taken (nothing is cleaned then).
int cleanup_add_dir(const char* path);
void cleanup_remove_dir(int slot);
int cleanup_add_group(pid_t pgid);
void cleanup_remove_group(int slot);

}  // namespace dlab::internal
