#!/usr/bin/env python3
"""The functions dlab-run runs for an empty WASI command, for its linker's symbol order
(interpreter/cli/dlab_run.order): placed together, an empty module's start-up touches a few
64 KiB runs of pages instead of one run per function scattered over 6 MB of code, and a process's
resident memory counts the pages it touched (the kernel maps 16 neighbouring pages at a time).
The order changes no instruction of any function.

    tools/startup_order.py build/release/dlab-run              # rewrite interpreter/cli/dlab_run.order
    tools/startup_order.py build/release/dlab-run --check      # exit 1 when the file misses some

The functions come from callgrind (valgrind's instruction-level tracer), which lists every function
a run enters, by its linkage name; the modules are the smallest WASI command (a memory and an
empty _start) and one that calls proc_exit. Sorted by name, so a rewrite's diff shows which functions came and went. --check
says which functions the run entered that the file lacks and fails when they are more than
--tolerance of them (a renamed helper or a new step in start-up): run it again without --check and
commit the file.
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ORDER = REPO / "interpreter" / "cli" / "dlab_run.order"

# (module (memory (export "memory") 1) (func (export "_start"))), assembled by hand: no wabt needed.
EMPTY_COMMAND = bytes.fromhex(
    "0061736d01000000"          # magic, version 1
    "010401600000"              # type section: () -> ()
    "03020100"                  # function section: one function of type 0
    "05030100" "01"             # memory section: one memory, min 1 page
    "071302" "066d656d6f7279" "0200" "065f7374617274" "0000"  # export "memory" (memory 0), "_start" (func 0)
    "0a040102000b")             # code section: one body, no locals, end

# (module (import "wasi_snapshot_preview1" "proc_exit" (func (param i32))) (memory (export "memory") 1)
#  (func (export "_start") (call 0 (i32.const 0)))): the exit most programs end with (Go's always),
# which dlab-run takes as a C++ exception: the unwinder's functions are start-up's too.
EXITING_COMMAND = bytes.fromhex(
    "0061736d0100000001080260017f0060000002240116776173695f736e617073686f745f70726576696577310970726f635f657869"
    "740000030201010503010001071302066d656d6f72790200065f737461727400010a08010600410010000b")

HEADER = ("# dlab-run's start-up functions, by linkage name: the linker places them together (--symbol-ordering-file).\n"
          "# Made by tools/startup_order.py from callgrind runs of an empty WASI command and one that calls proc_exit; do not edit by hand.\n")


def entered_functions(dlab_run: Path) -> set[str]:
    """The linkage names of the functions runs of the two commands entered, as callgrind saw them."""
    return entered_by(dlab_run, EMPTY_COMMAND) | entered_by(dlab_run, EXITING_COMMAND)


def entered_by(dlab_run: Path, command: bytes) -> set[str]:
    with tempfile.TemporaryDirectory() as tmp:
        module, out = Path(tmp) / "command.wasm", Path(tmp) / "callgrind.out"
        module.write_bytes(command)
        run = subprocess.run(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}", str(dlab_run.resolve()),
                              str(module)], capture_output=True, text=True, timeout=300)
        if run.returncode != 0:
            sys.exit(f"startup_order: {dlab_run} under callgrind failed (exit {run.returncode}):\n{run.stderr[-2000:]}")
        names: set[str] = set()
        # fn= and cfn= lines name a function the first time they give its id: "fn=(12) _ZN4dlab...".
        for line in out.read_text(errors="replace").splitlines():
            m = re.match(r"c?fn=\(\d+\) (.+)$", line)
            if m:
                names.add(m.group(1))
    # Callgrind's own labels are not symbols: an address ("0x0000000000401000") or "(below main)".
    return {n for n in names if not n.startswith("0x") and not n.startswith("(") and " " not in n}


def read_order(path: Path) -> set[str]:
    return {line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dlab_run", type=Path, help="the dlab-run executable (build/release/dlab-run)")
    ap.add_argument("--check", action="store_true", help="only compare the run with the committed file")
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="with --check: the share of entered functions the file may lack (default 0.05)")
    ap.add_argument("--output", type=Path, default=ORDER, help=f"the order file (default {ORDER.relative_to(REPO)})")
    args = ap.parse_args()
    if not args.dlab_run.is_file():
        sys.exit(f"startup_order: {args.dlab_run} is not a file: build it first (cmake --build build/release --target dlab-run)")
    entered = entered_functions(args.dlab_run)
    if not entered:
        sys.exit("startup_order: callgrind named no function: is valgrind working here?")
    if args.check:
        missing = sorted(entered - read_order(args.output)) if args.output.exists() else sorted(entered)
        share = len(missing) / len(entered)
        print(f"{len(entered)} functions entered, {len(missing)} ({share:.1%}) not in {args.output}")
        for name in missing[:40]:
            print(f"  {name}")
        if share > args.tolerance:
            print(f"more than {args.tolerance:.0%} missing: run tools/startup_order.py {args.dlab_run} and commit the file")
            return 1
        return 0
    args.output.write_text(HEADER + "".join(f"{name}\n" for name in sorted(entered)))
    print(f"wrote {len(entered)} functions into {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
