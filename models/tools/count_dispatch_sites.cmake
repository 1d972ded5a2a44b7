# cmake -DOBJDUMP=... -DOUT=... -DOBJECTS="a.o;b.o" -P count_dispatch_sites.cmake
# Counts the indirect jumps (dispatch sites) each generated model file compiled to, so that a
# comparison never silently runs against a degraded baseline (clang 19 merges the `goto *` sites
# of computed-goto dispatch unless tail duplication is forced).
set(rows "")
foreach(obj ${OBJECTS})
  execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${obj} OUTPUT_VARIABLE asm RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} failed on ${obj}")
  endif()
  # x86-64: jmp *...; arm64: br xN
  string(REGEX MATCHALL "\tjmpq?[ \t]+\\*|\tbr[ \t]+x" sites "${asm}")
  list(LENGTH sites n)
  get_filename_component(name ${obj} NAME)
  string(REGEX REPLACE "\\.cc\\.o(bj)?$" "" stem ${name})
  string(APPEND rows "${stem}\t${n}\n")
endforeach()
file(WRITE ${OUT} "${rows}")
