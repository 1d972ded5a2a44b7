# Precompiled headers for the code that is never timed (dlab's command line, the harness, the
# interpreter's library outside its engines, the test programs). Their front end (clang
# -fsyntax-only) was 50-65% of such a file's compile, most of it these same headers again: fmt,
# nlohmann/json, CLI11, GoogleTest and the standard library. With them precompiled, dlab's 21
# command-line files took 118 CPU-seconds instead of 155 (2-vCPU Zen 5 guest, ninja -j2). The
# measured code (the engines' dispatch files, the models' handlers, the files that time or count)
# is compiled without one: exactly as before.
#
# Only libraries' and the standard library's headers are here: a change to one of dispatchlab's own
# headers rebuilds what includes it, as before, and nothing else.
set(DLAB_PCH_STANDARD
  <algorithm> <array> <atomic> <cerrno> <charconv> <chrono> <cmath> <cstdint> <cstdio> <cstdlib>
  <cstring> <deque> <filesystem> <fstream> <functional> <map> <memory> <mutex> <optional> <set>
  <sstream> <stdexcept> <string> <string_view> <thread> <unordered_map> <utility> <variant> <vector>
  <fmt/format.h> <fmt/ranges.h> <nlohmann/json.hpp>)

# A header compiled into a precompiled one is checked by its modification time when the PCH is used,
# and Debian's packages install headers with the time they were packaged: an upgrade (./tools/bootstrap
# aarch64 reinstalls linux-libc-dev for arm64 beside amd64) leaves /usr/include/asm-generic/*.h
# older than the PCH, so ninja keeps it, yet with another time than it recorded, so clang refuses it
# ("has been modified since the precompiled header was built"). Checked by content instead when
# the times differ.
set(DLAB_PCH_VALIDATION $<$<COMPILE_LANGUAGE:CXX>:-fpch-validate-input-files-content>)

# dlab_precompile(<target> [CLI11] [GTEST]): the target's own precompiled header (its flags, its
# definitions), with CLI11's and GoogleTest's headers where the target uses them.
function(dlab_precompile target)
  if(DLAB_NO_PCH)
    return()
  endif()
  target_compile_options(${target} PRIVATE ${DLAB_PCH_VALIDATION})
  set(headers ${DLAB_PCH_STANDARD})
  if("CLI11" IN_LIST ARGN)
    list(APPEND headers <CLI/CLI.hpp>)
  endif()
  if("GTEST" IN_LIST ARGN)
    list(APPEND headers <gtest/gtest.h>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

# dlab_precompile_test(<target>): the test programs of one folder share one precompiled header
# (GoogleTest's with the rest), made with the folder's first test program: a header per program
# would cost more than it saves (one for each of some forty programs).
function(dlab_precompile_test target)
  if(DLAB_NO_PCH)
    return()
  endif()
  get_property(owner DIRECTORY PROPERTY DLAB_TEST_PCH_OWNER)
  if(owner)
    target_precompile_headers(${target} REUSE_FROM ${owner})
    target_compile_options(${target} PRIVATE ${DLAB_PCH_VALIDATION})
  else()
    dlab_precompile(${target} GTEST)
    set_property(DIRECTORY PROPERTY DLAB_TEST_PCH_OWNER ${target})
  endif()
endfunction()
