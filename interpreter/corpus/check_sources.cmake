# Run by the `corpus` target before anything is compiled (cmake -P): fails, saying what to do,
# when the sources of a workload are not where the build looks for them.
#   -DCORPUS_DIR=<DLAB_CORPUS_DIR> -DCORPUS_NAMES=<name,name,...>
string(REPLACE "," ";" _names "${CORPUS_NAMES}")
set(_missing)
foreach(_name IN LISTS _names)
  # tools/fetch-corpus writes .fetched last, so its presence means a complete folder.
  if(NOT EXISTS "${CORPUS_DIR}/${_name}/.fetched")
    list(APPEND _missing ${_name})
  endif()
endforeach()
if(_missing)
  list(JOIN _missing ", " _missing)
  message(FATAL_ERROR
    "corpus: no sources for ${_missing} in ${CORPUS_DIR}.\n"
    "Run ./tools/fetch-corpus (it fetches them from npm into $HOME/.cache/dispatchlab/corpus), "
    "then build again; for sources elsewhere, configure with -DDLAB_CORPUS_DIR=<cache>/src.")
endif()
