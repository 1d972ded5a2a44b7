// The lz4 workload: the LZ4 library (lz4.c, lz4hc.c, lz4frame.c, xxhash.c from npm lz4@0.6.5)
// compressing `size` KiB of generated English-like text in the LZ4 frame format (what the lz4
// command line writes) two ways, and checking both round trips:
//   1. the fast compressor (level 0) on independent 64 KiB blocks, each with an XXH32 checksum;
//   2. LZ4 HC at level 4 on linked 64 KiB blocks (matches reach into the previous block), with a
//      content checksum. Level 4 rather than HC's default 9: at 9 the match search is over 90% of
//      the time and the workload would be one loop; at 4 it is about three quarters, the rest
//      the fast compressor, the decoder, XXH32 and memcmp.
// Each frame is decompressed through LZ4F_decompress in 16 KiB output pieces, as a stream reader
// would. The checksum is XXH32 over both compressed frames and their sizes.
//
// Why frames of 64 KiB blocks, not LZ4_compress_default on the whole buffer: above 64 KiB the
// fast compressor hashes 5 bytes where a register is 64 bits and 4 where it is 32 (wasm32), so
// native and wasm would produce different (equally valid) output and do different work. On
// blocks of at most 64 KiB it hashes 4 bytes everywhere; HC is the same everywhere.
// Memory: about 4 * size KiB plus LZ4's contexts.

// The library's own sources, in one translation unit: lz4hc.c and lz4frame.c include lz4.c's
// definitions only once (LZ4_SRC_INCLUDED), and xxhash.c is standalone. LZ4 marks its API
// visibility("default") for a shared liblz4; empty, the native library exports only
// dlab_native_lz4.
#define LZ4LIB_VISIBILITY
#define LZ4FLIB_VISIBILITY
#include "lz4.c"
#include "lz4hc.c"
#include "lz4frame.c"
#include "xxhash.c"

#include <stdlib.h>
#include <string.h>

#include "corpus.h"

static const char kName[] = "lz4";

static const char* const kWords[] = {
    "the",     "of",       "and",     "to",       "a",       "in",        "is",       "that",
    "for",     "it",       "as",      "was",      "with",    "be",        "by",       "on",
    "not",     "he",       "this",    "are",      "or",      "his",       "from",     "at",
    "which",   "but",      "have",    "an",       "they",    "you",       "were",     "her",
    "interpreter", "dispatch", "handler", "register", "branch", "predictor", "module",  "memory",
    "function", "compile", "benchmark", "instruction", "stack", "operand",  "table",    "engine",
    "measure", "sample",   "cycle",   "cache",    "latency", "throughput", "frontend", "backend",
    "Monday",  "Tuesday",  "report",  "result",   "checksum", "kernel",    "window",   "buffer",
};
#define NUM_WORDS (sizeof kWords / sizeof kWords[0])

// Fills buf with n bytes of text: words drawn with a skewed (roughly Zipfian) choice, numbers now
// and then, punctuation and line breaks. The fast level compresses it to about 55%, HC to about 40%.
static void make_text(char* buf, size_t n) {
  uint32_t rng = 0x2545f491u;
  size_t len = 0;
  int words_on_line = 0;
  while (len < n) {
    char number[12];
    const char* piece;
    uint32_t r = corpus_rand(&rng);
    if (r % 11 == 0) {  // a number, written backwards from the end of `number`
      uint32_t v = corpus_rand(&rng) % 100000;
      char* p = number + sizeof number - 1;
      *p = '\0';
      do *--p = (char)('0' + v % 10); while (v /= 10);
      piece = p;
    } else {
      piece = kWords[(r >> 8) % ((r >> 20) % NUM_WORDS + 1)];
    }
    const char* tail = ++words_on_line >= 12 ? (words_on_line = 0, ".\n") : r % 9 == 0 ? ", " : " ";
    for (const char* p = piece; *p && len < n; ++p) buf[len++] = *p;
    for (const char* p = tail; *p && len < n; ++p) buf[len++] = *p;
  }
}

// Decompresses a whole frame into out (capacity n) in 16 KiB output pieces; returns the bytes
// written, or (size_t)-1 on an error.
static size_t frame_decompress(const char* packed, size_t c, char* out, size_t n) {
  LZ4F_dctx* dctx = NULL;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) return (size_t)-1;
  size_t in = 0, written = 0, hint = 1;
  while (hint != 0 && in < c) {
    size_t src = c - in, dst = n - written < 16384 ? n - written : 16384;
    hint = LZ4F_decompress(dctx, out + written, &dst, packed + in, &src, NULL);
    if (LZ4F_isError(hint)) {
      corpus_fail(kName, "LZ4F_decompress", LZ4F_getErrorName(hint));
      written = (size_t)-1;
      break;
    }
    in += src;
    written += dst;
    if (src == 0 && dst == 0) {  // no progress: the output is full but the frame is not done
      written = (size_t)-1;
      break;
    }
  }
  LZ4F_freeDecompressionContext(dctx);
  return written;
}

// One round trip: compresses text into packed as a frame with these preferences, decompresses it
// and compares. Returns the frame's size, or 0 on a failure.
static size_t frame_round_trip(const LZ4F_preferences_t* prefs, const char* text, size_t n, char* packed,
                               size_t packed_cap, char* out) {
  size_t c = LZ4F_compressFrame(packed, packed_cap, text, n, prefs);
  if (LZ4F_isError(c)) return corpus_fail(kName, "LZ4F_compressFrame", LZ4F_getErrorName(c));
  if (frame_decompress(packed, c, out, n) != n || memcmp(out, text, n) != 0)
    return corpus_fail(kName, "frame round trip differs", NULL);
  return c;
}

CORPUS_ENTRY(lz4) {
  if (size < 1) size = 1;
  if (size > 64 * 1024) return corpus_fail(kName, "size is KiB of text, at most 65536", NULL);
  size_t n = (size_t)size * 1024;
  LZ4F_preferences_t fast, hc;
  memset(&fast, 0, sizeof fast);
  fast.frameInfo.blockSizeID = LZ4F_max64KB;
  fast.frameInfo.blockMode = LZ4F_blockIndependent;
  fast.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  fast.compressionLevel = 0;
  memset(&hc, 0, sizeof hc);
  hc.frameInfo.blockSizeID = LZ4F_max64KB;
  hc.frameInfo.blockMode = LZ4F_blockLinked;
  hc.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  hc.compressionLevel = 4;
  // The bound with every checksum on covers both frames.
  LZ4F_preferences_t bound = fast;
  bound.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  size_t cap = LZ4F_compressFrameBound(n, &bound);
  char* text = malloc(n);
  char* out = malloc(n);
  char* packed_fast = malloc(cap);
  char* packed_hc = malloc(cap);
  uint32_t result = CORPUS_FAILED;
  if (!text || !out || !packed_fast || !packed_hc) {
    corpus_fail(kName, "out of memory", NULL);
  } else {
    make_text(text, n);
    size_t a = frame_round_trip(&fast, text, n, packed_fast, cap, out);
    size_t b = a ? frame_round_trip(&hc, text, n, packed_hc, cap, out) : 0;
    if (b) {
      uint32_t sizes[2] = {(uint32_t)a, (uint32_t)b};
      uint32_t h = XXH32(packed_fast, a, 0);
      h = XXH32(packed_hc, b, h);
      result = corpus_finish(XXH32(sizes, sizeof sizes, h));
    }
  }
  free(text);
  free(out);
  free(packed_fast);
  free(packed_hc);
  return result;
}
