#!/usr/bin/env python3
"""Prints the functions of one binary that ran, from callgrind outputs, for a linker's
--symbol-ordering-file: scripts/order-file's second half.

    callgrind_order.py UNSTRIPPED OBJECT_NAME OUTPUT...

The outputs come from `valgrind --tool=callgrind --dump-instr=yes --compress-pos=no
--compress-strings=no` on a stripped copy of UNSTRIPPED (valgrind cannot read the debug
information of Swift's static release build), so each executed instruction is an address of the
object whose path contains OBJECT_NAME; the unstripped binary's symbol table names the function
around it. Instructions, not calls, are what count: Swift's async functions are split into
partial functions that are entered by jumps, which callgrind does not see as calls.
"""
import bisect
import subprocess
import sys


def functions(unstripped):
    """(start, size, name) of every function, by address."""
    table = []
    nm = subprocess.run(["nm", "-n", "-S", "--defined-only", unstripped], capture_output=True, text=True, check=True)
    for line in nm.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[2] in "tTwW":
            table.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return table


def main():
    unstripped, object_name, outputs = sys.argv[1], sys.argv[2], sys.argv[3:]
    table = functions(unstripped)
    starts = [start for start, _, _ in table]
    ran = {}  # name -> size, in the order first seen

    def executed(address):
        at = bisect.bisect_right(starts, address) - 1
        if at >= 0 and address < table[at][0] + max(table[at][1], 1):
            ran.setdefault(table[at][2], table[at][1])

    for output in outputs:
        current = called = None
        with open(output, errors="replace") as lines:
            for line in lines:
                if line.startswith("ob="):
                    current = line[3:].strip()
                elif line.startswith("cob="):
                    called = line[4:].strip()
                elif line.startswith("fn="):
                    called = None
                elif line.startswith("calls="):
                    target = line.split()[1]
                    if object_name in (called or current or "") and target.startswith("0x"):
                        executed(int(target, 16))
                elif line.startswith("0x") and object_name in (current or ""):
                    executed(int(line.split()[0], 16))
    print(f"{len(ran)} functions ran, {sum(ran.values()) / 1e6:.2f} MB of code", file=sys.stderr)
    for name in ran:
        print(name)


if __name__ == "__main__":
    main()
