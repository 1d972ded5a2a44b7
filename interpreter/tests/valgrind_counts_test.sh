#!/usr/bin/env bash
# dlab wasm bench --valgrind counts per call under cachegrind (deterministic, no PMU needed):
# every mode gets positive instruction, load and store counts, and the switch loop executes more
# instructions per call than tail-call dispatch on the same workload. With --valgrind-reuse, a
# second bench of an identical case reads it back instead of counting it again, with the same
# numbers, and says so.
# Usage: valgrind_counts_test.sh DLAB [run|skip]  (skip: an ASan build, which valgrind cannot run)
set -u
dlab=$1
if [ "${2:-run}" = skip ]; then
  echo "skipped: valgrind cannot run AddressSanitizer binaries; this test runs in the release preset"
  exit 77
fi
reuse=$(mktemp -d) || exit 1
trap 'rm -rf "$reuse"' EXIT
out=$("$dlab" wasm bench --valgrind --valgrind-reuse "$reuse" --workloads crc32 --dispatch switch,tail --no-save 2>/dev/null) || { echo "bench failed"; exit 1; }
echo "$out"
sw=$(awk '$1 == "crc32/switch" {print $2}' <<<"$out")
tl=$(awk '$1 == "crc32/tail" {print $2}' <<<"$out")
[ -n "$sw" ] && [ -n "$tl" ] || { echo "FAIL: no counts for crc32/switch or crc32/tail"; exit 1; }
awk -v s="$sw" -v t="$tl" 'BEGIN { exit !(s > 0 && t > 0 && s > t) }' || { echo "FAIL: expected switch ($sw) > tail ($tl) > 0 instructions per call"; exit 1; }
for col in 3 4; do
  awk -v c=$col '$1 ~ /^crc32\// && !($c > 0) { bad = 1 } END { exit bad }' <<<"$out" || { echo "FAIL: column $col not positive"; exit 1; }
done
again=$("$dlab" wasm bench --valgrind --valgrind-reuse "$reuse" --workloads crc32 --dispatch tail --no-save 2>/dev/null) || { echo "second bench failed"; exit 1; }
echo "$again"
grep -q '^crc32/tail .*(read back: wasm_valgrind: crc32/tail)$' <<<"$again" || { echo "FAIL: the identical case was not read back"; exit 1; }
[ "$(awk '$1 == "crc32/tail" {print $2, $3, $4, $5}' <<<"$again")" = "$(awk '$1 == "crc32/tail" {print $2, $3, $4, $5}' <<<"$out")" ] ||
  { echo "FAIL: the case read back has other counts"; exit 1; }
echo "ok: switch $sw > tail $tl instructions per call; the identical case read back"
