// A WASI program that does what real programs do with files: `io stdin` counts the lines, words
// and bytes of its standard input (as wc); `io cat FILE...` copies files to stdout; `io ls DIR`
// lists a folder's names sorted; `io write FILE TEXT` creates FILE with TEXT and reads it back;
// `io seek FILE` reads a file from the end backwards. Its output is compared with the same source
// built natively (interpreter/tests/cli/test_wasm_run_wasi.py).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char* what, const char* path) {
  printf("error: %s %s: %s\n", what, path, strerror(errno));
  return 1;
}

static int count_stdin(void) {
  long lines = 0, words = 0, bytes = 0;
  int c, in_word = 0;
  while ((c = getchar()) != EOF) {
    ++bytes;
    if (c == '\n') ++lines;
    if (c == ' ' || c == '\n' || c == '\t') in_word = 0;
    else if (!in_word) in_word = 1, ++words;
  }
  printf("%ld %ld %ld\n", lines, words, bytes);
  return 0;
}

static int cat(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return fail("cannot open", path);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
  fclose(f);
  return 0;
}

static int by_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int ls(const char* path) {
  DIR* d = opendir(path);
  if (!d) return fail("cannot list", path);
  char* names[1024];
  size_t n = 0;
  for (struct dirent* e; (e = readdir(d)) && n < 1024;)
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, n, sizeof names[0], by_name);
  for (size_t i = 0; i < n; ++i) printf("%s\n", names[i]);
  return 0;
}

static int write_and_read(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  if (!f) return fail("cannot create", path);
  fputs(text, f);
  if (fclose(f) != 0) return fail("cannot write", path);
  return cat(path);
}

static int seek(const char* path) {
  FILE* f = fopen(path, "rb");
  if (!f) return fail("cannot open", path);
  if (fseek(f, 0, SEEK_END) != 0) return fail("cannot seek", path);
  for (long at = ftell(f) - 1; at >= 0; --at) {
    fseek(f, at, SEEK_SET);
    putchar(fgetc(f));
  }
  putchar('\n');
  fclose(f);
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && !strcmp(argv[1], "stdin")) return count_stdin();
  if (argc >= 3 && !strcmp(argv[1], "cat")) {
    int rc = 0;
    for (int i = 2; i < argc; ++i) rc |= cat(argv[i]);
    return rc;
  }
  if (argc == 3 && !strcmp(argv[1], "ls")) return ls(argv[2]);
  if (argc == 4 && !strcmp(argv[1], "write")) return write_and_read(argv[2], argv[3]);
  if (argc == 3 && !strcmp(argv[1], "seek")) return seek(argv[2]);
  fprintf(stderr, "usage: io stdin | cat FILE... | ls DIR | write FILE TEXT | seek FILE\n");
  return 2;
}
