# Where the WebAssembly spec suite comes from: one place for both the configure step (the top-level
# CMakeLists.txt includes this before project(), so a checkout without a suite stops at once,
# before the compiler checks) and `tools/spec-suite locate` (which runs it as a script:
# cmake -DDLAB_SOURCE_DIR=<checkout> -DDLAB_CACHED=<cache value> -P tools/spec-suite.cmake).
#
# In order, the first that is set or present:
#   1. the environment variable DLAB_WASM_TESTSUITE (non-empty). It wins over the cache entry, so
#      that a changed value is noticed when configuring again, and it is written into the cache,
#      so that a later configure without it (ninja re-running CMake, another shell) keeps it;
#   2. the CMake cache variable DLAB_WASM_TESTSUITE (-DDLAB_WASM_TESTSUITE=..., or remembered
#      from 1; -DDLAB_WASM_TESTSUITE= empties it and brings back 3 and 4);
#   3. ../shared/wasm-spec-3.0 beside the checkout;
#   4. .cache/wasm-spec-3.0 in the checkout (ignored by git), as `tools/spec-suite fetch` writes it;
# else an error of one line that says what to do. `none` (in 1 or 2) is a machine that only
# measures (a fleet host, `just rfc` without ../shared): configuring goes on without a suite, and
# the spec tests are replaced by one that fails saying so, so a test run there never passes.
# else an error of one line that says what to do. 1 and 2 must be a folder holding .bin.wast
# scripts (converted by the reference interpreter) or .wast files; a relative path is taken from
# the checkout's root. 3 and 4 hold text/, binary/ and reference-interpreter/ (the runner reads
# the .bin.wast scripts of binary/ and leaves text/ alone).

# The number of .wast files (any) and of .bin.wast files below DIR.
function(_dlab_count_scripts dir out_wast out_bin)
  file(GLOB_RECURSE _all LIST_DIRECTORIES false "${dir}/*.wast")
  file(GLOB_RECURSE _bin LIST_DIRECTORIES false "${dir}/*.bin.wast")
  list(LENGTH _all _n_all)
  list(LENGTH _bin _n_bin)
  set(${out_wast} ${_n_all} PARENT_SCOPE)
  set(${out_bin} ${_n_bin} PARENT_SCOPE)
endfunction()

# Sets OUT_DIR to the suite's folder and OUT_WHY to where it came from, or OUT_ERROR to one line.
# OUT_ORIGIN is env, cache, shared or fetched (empty on an error).
function(dlab_wasm_testsuite_resolve source_dir cached out_dir out_why out_origin out_error)
  set(_dir "")
  set(_why "")
  set(_origin "")
  set(_error "")
  set(_env "$ENV{DLAB_WASM_TESTSUITE}")
  # Configures before this file wrote this default into the cache: it was no one's choice.
  if(cached STREQUAL "${source_dir}/../shared/wasm-spec-3.0")
    set(cached "")
  endif()
  if(_env STREQUAL "none" OR (_env STREQUAL "" AND cached STREQUAL "none"))
    set(_origin none)
    set(_why "DLAB_WASM_TESTSUITE=none: no spec suite (a machine that only measures); the spec tests are one failing test")
  elseif(NOT _env STREQUAL "" OR NOT cached STREQUAL "")
    if(NOT _env STREQUAL "")
      set(_given "${_env}")
      set(_origin env)
      set(_from "the environment variable DLAB_WASM_TESTSUITE")
      if(NOT cached STREQUAL "")
        get_filename_component(_cached_abs "${cached}" ABSOLUTE BASE_DIR "${source_dir}")
        get_filename_component(_env_abs "${_env}" ABSOLUTE BASE_DIR "${source_dir}")
        if(NOT _cached_abs STREQUAL _env_abs)
          string(APPEND _from ", over the cache's ${cached}")
        endif()
      endif()
    else()
      set(_given "${cached}")
      set(_origin cache)
      set(_from "the CMake cache variable DLAB_WASM_TESTSUITE: -D, or the environment variable at an earlier configure; -DDLAB_WASM_TESTSUITE= empties it")
    endif()
    get_filename_component(_dir "${_given}" ABSOLUTE BASE_DIR "${source_dir}")
    set(_what "converted .bin.wast scripts (tools/spec-suite convert, or tools/spec-suite fetch)")
    if(NOT IS_DIRECTORY "${_dir}")
      set(_error "DLAB_WASM_TESTSUITE=${_given} (${_from}) is not a folder: point it at a folder of ${_what}, or unset it")
    else()
      _dlab_count_scripts("${_dir}" _n _n_bin)
      if(_n EQUAL 0)
        set(_error "DLAB_WASM_TESTSUITE=${_given} (${_from}) holds no .bin.wast or .wast scripts: point it at a folder of ${_what}, or unset it")
      elseif(_n_bin EQUAL 0)
        set(_why "${_from}; .wast text only: run through wast2json")
      else()
        set(_why "${_from}")
      endif()
    endif()
  else()
    get_filename_component(_shared "${source_dir}/../shared/wasm-spec-3.0" ABSOLUTE)
    get_filename_component(_fetched "${source_dir}/.cache/wasm-spec-3.0" ABSOLUTE)
    set(_n_shared 0)
    set(_n_fetched 0)
    if(IS_DIRECTORY "${_shared}")
      _dlab_count_scripts("${_shared}" _all _n_shared)
    endif()
    if(IS_DIRECTORY "${_fetched}")
      _dlab_count_scripts("${_fetched}" _all _n_fetched)
    endif()
    if(_n_shared GREATER 0)
      set(_dir "${_shared}")
      set(_origin shared)
      set(_why "../shared/wasm-spec-3.0 beside the checkout; DLAB_WASM_TESTSUITE is not set")
    elseif(_n_fetched GREATER 0)
      set(_dir "${_fetched}")
      set(_origin fetched)
      set(_why ".cache/wasm-spec-3.0 in the checkout, written by tools/spec-suite fetch; DLAB_WASM_TESTSUITE is not set, no ../shared/wasm-spec-3.0")
    else()
      set(_dir "")
      set(_error "No WebAssembly spec suite (none in DLAB_WASM_TESTSUITE, ../shared/wasm-spec-3.0 or .cache/wasm-spec-3.0): set DLAB_WASM_TESTSUITE to a folder of converted .bin.wast scripts, or run `tools/spec-suite fetch` (needs network), then configure again (DLAB_WASM_TESTSUITE=none builds without it, for a machine that only measures: the spec tests then fail)")
    endif()
  endif()
  if(NOT _error STREQUAL "")
    set(_dir "")
    set(_origin "")
  endif()
  set(${out_dir} "${_dir}" PARENT_SCOPE)
  set(${out_why} "${_why}" PARENT_SCOPE)
  set(${out_origin} "${_origin}" PARENT_SCOPE)
  set(${out_error} "${_error}" PARENT_SCOPE)
endfunction()

if(CMAKE_SCRIPT_MODE_FILE)
  # tools/spec-suite locate: three lines on stderr (cmake -P has no stdout of its own).
  dlab_wasm_testsuite_resolve("${DLAB_SOURCE_DIR}" "${DLAB_CACHED}" _dir _why _origin _error)
  if(NOT _error STREQUAL "")
    message(NOTICE "error=${_error}")
  else()
    message(NOTICE "dir=${_dir}")
    message(NOTICE "origin=${_origin}")
    message(NOTICE "why=${_why}")
  endif()
else()
  # The configure step: the cache variable is the user's choice (empty: automatic); the normal
  # variable of the same name, which the rest of the build reads, is the folder resolved.
  set(DLAB_WASM_TESTSUITE "" CACHE PATH
      "WebAssembly spec tests: a folder of .bin.wast scripts (or .wast files); empty: ../shared/wasm-spec-3.0, else .cache/wasm-spec-3.0 (tools/spec-suite)")
  if(DLAB_WASM_TESTSUITE STREQUAL "${CMAKE_CURRENT_SOURCE_DIR}/../shared/wasm-spec-3.0")
    set_property(CACHE DLAB_WASM_TESTSUITE PROPERTY VALUE "")  # the old default (see above)
  endif()
  dlab_wasm_testsuite_resolve("${CMAKE_CURRENT_SOURCE_DIR}" "${DLAB_WASM_TESTSUITE}" _dlab_suite _dlab_suite_why _dlab_suite_origin _dlab_suite_error)
  # The includer stops on it (message(FATAL_ERROR) there: no call stack beside the line).
  set(DLAB_WASM_TESTSUITE_ERROR "${_dlab_suite_error}")
  if(NOT _dlab_suite_error STREQUAL "")
    return()
  endif()
  set(DLAB_WASM_TESTSUITE_NONE FALSE)
  if(_dlab_suite_origin STREQUAL "none")
    set(DLAB_WASM_TESTSUITE_NONE TRUE)
  endif()
  if(_dlab_suite_origin STREQUAL "env")
    set(DLAB_WASM_TESTSUITE "${_dlab_suite}" CACHE PATH
        "WebAssembly spec tests: a folder of .bin.wast scripts (or .wast files); empty: ../shared/wasm-spec-3.0, else .cache/wasm-spec-3.0 (tools/spec-suite)" FORCE)
  endif()
  set(DLAB_WASM_TESTSUITE_RESOLVED "${_dlab_suite}" CACHE INTERNAL "the spec suite this configure resolved (tools/spec-suite locate)")
  set(DLAB_WASM_TESTSUITE_WHY "${_dlab_suite_why}" CACHE INTERNAL "where DLAB_WASM_TESTSUITE_RESOLVED came from")
  if(DLAB_WASM_TESTSUITE_NONE)
    message(STATUS "WebAssembly spec suite: none (${_dlab_suite_why})")
  else()
    message(STATUS "WebAssembly spec suite: ${_dlab_suite}, from ${_dlab_suite_why}")
  endif()
  set(DLAB_WASM_TESTSUITE "${_dlab_suite}")
endif()
