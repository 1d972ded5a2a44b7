// dlab's standard output, checked. Output that never reached its reader is a failure, as in
// coreutils: a closed descriptor (`>&-`), a full disk (`>/dev/full`) or a reader that quit
// (`| head -1`) makes dlab exit non-zero with one line on stderr, never a silent success and
// never a silent death by SIGPIPE.
#pragma once

#include <string>

namespace dlab::standard_output {

// Called first in main, before install(). A closed standard descriptor would be reused by the next
// open(2): a result file would become "stderr" and receive the progress lines (dlab), a module or a
// guest's file descriptor 0 (dlab-run). A closed stdin or stderr is pointed at /dev/null (errors to
// a closed stderr are lost, the exit status still says); stdout is install's, which keeps a closed
// one unwritable, so output to it is a failure.
void reserve_standard_descriptors() noexcept;
// Ignores SIGPIPE (a write to a pipe whose reader quit then fails with
// EPIPE, which is reported, instead of killing dlab without a word; children get SIGPIPE's
// default back, process.cc), keeps a closed descriptor 1 reserved but unwritable (so no file dlab
// opens becomes "stdout", and a write to it still fails as a closed one would), and routes
// `stdout` through one writer that remembers the first write that failed.
// Every writer keeps its own semantics: fmt::print throws, the WASI guest gets its errno.
void install();
// After install(): std::cout (where CLI11 prints help) through the same writer. In a file of its
// own (standard_output_iostream.cc): a program without streams links no <iostream>.
void route_cout();

// Flushes stdout and returns the errno of the first write to descriptor 1 that failed; 0 if none.
int flush_and_check();

// The one line that says why standard output failed: "dlab: error: output closed: ..." for a
// reader that quit (EPIPE), "... standard output is closed ..." for `>&-`, else the system's reason.
std::string failure_message(int err);

// Writes text to descriptor 2 as far as it goes and gives up quietly: an error message must never
// be a second failure (with stderr closed or full, fmt::print would throw inside the handler of
// the first error). The exit status carries the failure either way.
void write_stderr(const std::string& text) noexcept;

}  // namespace dlab::standard_output
