// std::cout through install()'s writer, apart from standard_output.cc: a program that includes
// <iostream> builds the C++ locale at every start-up, and dlab-run, which uses install() and no
// stream, does not pay for it.
#include <cstdio>
#include <ext/stdio_sync_filebuf.h>
#include <iostream>

#include "dispatchlab/harness/standard_output.h"

namespace dlab::standard_output {

void route_cout() {
  // libstdc++'s unbuffered stdio buffer: every write to std::cout is an fwrite to `stdout` at once,
  // so flush_and_check's flush of stdout covers it.
  static __gnu_cxx::stdio_sync_filebuf<char> cout_buffer(stdout);
  std::cout.rdbuf(&cout_buffer);
}

}  // namespace dlab::standard_output
