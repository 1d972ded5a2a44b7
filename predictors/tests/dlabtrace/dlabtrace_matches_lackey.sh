#!/bin/sh
# dlabtrace writes lackey's trace of one code range: the same instruction and access lines as
# `valgrind --tool=lackey --trace-mem=yes` for the instructions in the range (lackey's " M" as a
# load line then a store line), the first instruction after the range, and "X count" for the
# instructions run outside it. Compared on trace_target's traced_work, a function with loads,
# stores, read-modify-writes, branches and a call out of the range; then again sampled (--sample).
# Usage: dlabtrace_matches_lackey.sh VALGRIND_TOOL_DIR TRACE_TARGET
set -eu
tools=$1 target=$2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# traced_work's code: its address and size from nm (valgrind loads a PIE at 0x108000 on amd64,
# the same for both tools; the range is given in the trace's addresses).
set -- $(nm -S --defined-only "$target" | awk '$4 == "traced_work" { print $1, $2 }')
base=0
if readelf -h "$target" | grep -q 'DYN'; then base=$((0x108000)); fi
lo=$(printf '%x' $((0x$1 + base)))
hi=$(printf '%x' $((0x$1 + 0x$2 + base)))
VALGRIND_LIB=$tools valgrind --tool=lackey --trace-mem=yes --log-fd=3 "$target" 3>"$scratch/lackey" >/dev/null 2>&1
# lackey's whole trace, restricted as dlabtrace restricts it: with SAMPLE "ON/PERIOD", only the
# first ON of every PERIOD instructions of the process are traced, the rest are "G count" gaps
# (dlabtrace --sample).
expected() {
  awk -v lo="$lo" -v hi="$hi" -v sample="$1" '
    function hex(s,   i, c, v) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)) - 1; v = v * 16 + c } return v }
    function flush() { if (skipped) print "X " skipped; if (gapped) print "G " gapped; skipped = 0; gapped = 0 }
    BEGIN { l = hex(lo); h = hex(hi); inside = 0; skipped = 0; gapped = 0; n = 0; on = 0; period = 0
            if (sample != "") { split(sample, s, "/"); on = s[1] + 0; period = s[2] + 0 } }
    /^==/ { next }
    /^I/ { split($2, a, ","); pc = hex(a[1]); traced = period == 0 || (n % period) < on; n++
           if (pc >= l && pc < h && traced) { flush(); print; inside = 1; was = 1 }
           else if (was) { flush(); print; was = 0; inside = 0 }
           else if (!traced) { gapped++; inside = 0 }
           else { skipped++; inside = 0 }
           next }
    { if (!inside) next
      if ($1 == "M") { print " L " $2; print " S " $2 } else print }
    END { flush() }' "$scratch/lackey"
}
compare() {  # compare SAMPLE MIN_LINES
  if [ -n "$1" ]; then sample_option="--sample=$1"; else sample_option="--trace-fd=3"; fi
  VALGRIND_LIB=$tools valgrind --tool=dlabtrace --range="$lo-$hi" "$sample_option" "$target" 3>"$scratch/dlabtrace" >/dev/null 2>&1
  expected "$1" > "$scratch/expected"
  lines=$(grep -c '^I' "$scratch/dlabtrace" || true)
  if [ "$lines" -lt "$2" ]; then echo "FAIL: dlabtrace ${1:+--sample=$1 }traced $lines instructions of traced_work ($lo-$hi)"; exit 1; fi
  if ! cmp -s "$scratch/expected" "$scratch/dlabtrace"; then
    echo "FAIL: dlabtrace ${1:+--sample=$1 }differs from lackey's trace restricted to $lo-$hi:"
    diff "$scratch/expected" "$scratch/dlabtrace" | head -20
    exit 1
  fi
  echo "dlabtrace ${1:+--sample=$1 }= lackey on $lo-$hi: $lines instructions, $(wc -l < "$scratch/dlabtrace") lines"
}
compare "" 1000
# sampled: windows of 700 in every 1,500 instructions cut traced_work's loop at many points
compare "700/1500" 300
