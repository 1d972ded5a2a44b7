#!/usr/bin/env bash
# WASI programs through `dlab wasm run` in every dispatch mode: a C program's output and exit
# status equal the same source compiled natively; arguments and environment arrive; --invoke
# calls exports and reports traps as errors. Usage: wasi_programs_test.sh DLAB CLANG SRC_DIR WORK_DIR
set -u
dlab=$1 clang=$2 src=$3 work=$4
mkdir -p "$work"
fail=0
check() {  # description, command...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
if [ ! -e /usr/lib/wasm32-wasi/libc.a ]; then
  echo "wasi-libc is missing: run ./tools/bootstrap (Debian packages wasi-libc, libclang-rt-19-dev-wasm32)" >&2
  exit 1
fi
"$clang" -x c --target=wasm32-wasi --sysroot=/usr -O2 "$src/checksum.c" -lm -o "$work/checksum.wasm" || exit 1
"$clang" -x c -O2 "$src/checksum.c" -lm -o "$work/checksum.native" || exit 1
"$clang" -x c --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor "$src/exports.c" -o "$work/exports.wasm" || exit 1
"$work/checksum.native" 5000 >"$work/native.txt"
native_rc=$?
# Every mode this build has (`dlab wasm engines`: goto is built with the compared engines); at least
# switch, tail and tail_pn.
modes=$("$dlab" wasm engines | awk '$3 == "sp" && $4 == "none" && $5 == "check" && $6 == "built" { print $2 }')
check "switch, tail and tail_pn are built (got: $(echo $modes))" grep -qz 'switch.*tail.*tail_pn' <<<"$modes"
for mode in $modes; do
  "$dlab" wasm run --dispatch $mode "$work/checksum.wasm" 5000 >"$work/$mode.txt"
  rc=$?
  check "checksum.c output under $mode equals native" cmp -s "$work/native.txt" "$work/$mode.txt"
  check "checksum.c exit status under $mode ($rc) equals native ($native_rc)" test "$rc" = "$native_rc"
done
out=$("$dlab" wasm run --env GREETING=hi "$work/exports.wasm" --invoke add 40 2)
check "--invoke add 40 2 prints 42" test "$out" = 42
out=$("$dlab" wasm run "$work/exports.wasm" --invoke mul64 -- -3 5000000000)
check "--invoke mul64 -3 5000000000 prints -15000000000" test "$out" = -15000000000
out=$("$dlab" wasm run "$work/exports.wasm" --invoke hypot 3 4)
check "--invoke hypot 3 4 prints 5" test "$out" = 5
err=$("$dlab" wasm run "$work/exports.wasm" --invoke div 1 0 2>&1)
check "a trap is an error with the spec's message (got: $err)" grep -q "trap: integer divide by zero" <<<"$err"
err=$("$dlab" wasm run "$work/exports.wasm" 2>&1)
check "a module without _start says to use --invoke" grep -q "pass --invoke" <<<"$err"
printf '\0asm\1\0\0\0\1\5' >"$work/truncated.wasm"
err=$("$dlab" wasm run "$work/truncated.wasm" 2>&1)
rc=$?
check "a malformed module is an error, not a crash (rc $rc: $err)" test "$rc" = 1
exit $fail
