// The corpus of real programs: third-party C libraries (SQLite, LZ4, Lua; see corpus.def for the
// packages and versions) driven by a workload this project writes, for benchmarking the
// interpreter on code it was not tuned to. Like the kernels in ../workloads, each workload is
// `uint32_t name(uint32_t size)`: deterministic, returning a checksum that is the same in the
// wasm32-wasi build and the native one, so every engine can be checked before it is timed.
//
// Each <name>_bench.c is one translation unit that sets the library's compile-time options and
// then includes the library's own .c files from the cache (./tools/fetch-corpus), so the options
// live in one place and the native and wasm builds cannot drift apart.
//
// A workload returns CORPUS_FAILED (0) after printing why to stderr when something it relies on
// fails (an allocation, a library call); a real checksum is never 0 (corpus_finish).
#ifndef DLAB_CORPUS_H
#define DLAB_CORPUS_H

#include <stdint.h>
#include <stdio.h>

// CORPUS_SYMBOL(name): the C name of a workload's entry point. In the wasm build it is the export
// `name` (corpus.wasm, corpus_cmd.wasm); in the native build (DLAB_NATIVE, the shared library
// libdlab_corpus_native.so that dlab dlopens) it is dlab_native_<name>, the only symbol each
// driver makes visible (the library is compiled with -fvisibility=hidden).
#if defined(DLAB_NATIVE)
#define CORPUS_SYMBOL(name) dlab_native_##name
#define CORPUS_ENTRY(name) __attribute__((visibility("default"))) uint32_t CORPUS_SYMBOL(name)(uint32_t size)
#else
#define CORPUS_SYMBOL(name) name
#define CORPUS_ENTRY(name) __attribute__((export_name(#name))) uint32_t CORPUS_SYMBOL(name)(uint32_t size)
#endif

#define CORPUS_FAILED 0u

// FNV-1a over bytes, the checksum every driver folds its results into.
static inline uint32_t corpus_hash(uint32_t h, const void* data, size_t n) {
  const unsigned char* p = (const unsigned char*)data;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 16777619u;
  return h;
}
static inline uint32_t corpus_hash_u32(uint32_t h, uint32_t v) { return corpus_hash(h, &v, sizeof v); }
#define CORPUS_HASH_INIT 2166136261u

// A checksum is never CORPUS_FAILED.
static inline uint32_t corpus_finish(uint32_t h) { return h == CORPUS_FAILED ? 1u : h; }

// Reports a failure of workload `name` and returns CORPUS_FAILED, for `return corpus_fail(...)`.
static inline uint32_t corpus_fail(const char* name, const char* what, const char* detail) {
  fprintf(stderr, "corpus %s: %s%s%s\n", name, what, detail ? ": " : "", detail ? detail : "");
  return CORPUS_FAILED;
}

// A deterministic xorshift32 generator for the data the drivers make up.
static inline uint32_t corpus_rand(uint32_t* state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *state = x;
}

#endif
