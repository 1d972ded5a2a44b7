# handlers.def defines helper macros for its bodies and must undefine every one of them at its end:
# one left defined leaks into every file that includes it (ops.h, each dispatch mode) and may
# silently change what a later include means. Checked by the preprocessor, not by reading the
# text, so conditional definitions and the register IR's variants are seen as compiled:
# the macros defined after `#include "handlers.def"` must be exactly those defined before it.
#   cmake -DCXX=clang++ -DSRC=interpreter/src -DINCLUDE=interpreter/include -DOUT=dir -P handlers_def_leaks.cmake
cmake_minimum_required(VERSION 3.25)
file(MAKE_DIRECTORY "${OUT}")
file(WRITE "${OUT}/before.cc" "#define OP(name, ...)\n")
file(WRITE "${OUT}/after.cc" "#define OP(name, ...)\n#include \"engines/handlers.def\"\n")
set(_leaks "")
foreach(_config "-DDLW_REGISTER_IR=0" "-DDLW_REGISTER_IR=1")
  foreach(_tu before after)
    execute_process(COMMAND ${CXX} -std=c++20 ${_config} -E -dM -I${SRC} -I${INCLUDE} ${OUT}/${_tu}.cc
                    OUTPUT_VARIABLE _out ERROR_VARIABLE _err RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "preprocessing ${_tu}.cc (${_config}) failed: ${_err}")
    endif()
    string(REGEX MATCHALL "#define [A-Za-z_0-9]+" _defs "${_out}")
    set(_${_tu} ${_defs})
  endforeach()
  foreach(_d IN LISTS _after)
    if(NOT _d IN_LIST _before)
      string(REPLACE "#define " "" _name "${_d}")
      list(APPEND _leaks "${_name} (${_config})")
    endif()
  endforeach()
endforeach()
if(_leaks)
  string(REPLACE ";" ", " _leaks "${_leaks}")
  message(FATAL_ERROR "handlers.def leaves these macros defined (add an #undef to its epilogue): ${_leaks}")
endif()
message(STATUS "handlers.def undefines every macro it defines")
