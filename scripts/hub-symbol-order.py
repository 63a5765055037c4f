#!/usr/bin/env python3
"""The functions of the hub build that ran under callgrind, for lld's --symbol-ordering-file.

usage: hub-symbol-order.py BINARY CALLGRIND_OUT... > scripts/hub/symbol-order.txt

BINARY is the (unstripped) executable the profiles ran; only its own functions are listed. They
come in the order of the profiles that first ran them (so what every hub runs can come before what
only some do), and within one profile's those with the most instructions first. A function
callgrind names by address (it had no symbol of its own) is listed under the symbol that contains
the address, and left out when none does: such functions are what scripts/hub/code-layout.ld groups.
Prints how many ran and their size on stderr.
"""
import bisect
import collections
import os
import re
import subprocess
import sys


def functions(binary):
    """(address, size, name) of every function symbol defined in BINARY, by address."""
    listing = subprocess.run(["nm", "-n", "-S", "--defined-only", binary], capture_output=True, text=True, check=True)
    found = []
    for line in listing.stdout.splitlines():
        fields = line.split(None, 3)
        if len(fields) == 4 and fields[2] in "tTwW":
            found.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
    return found


# A cost line starts with its position: a number, or relative to the last one ("+3", "-2", "*"),
# which callgrind writes by default (--compress-pos=yes).
COST_LINE_STARTS = tuple("0123456789+-*")


def self_costs(profile, binary, name_at):
    """Instructions per function of BINARY in one callgrind file (its self cost, without callees)."""
    costs = collections.Counter()
    definition = re.compile(r"(c?ob|c?fn)=\((\d+)\)(?: (.*))?$")
    objects, names = {}, {}
    in_binary, current, after_call = False, None, False
    with open(profile, errors="replace") as lines:
        for line in lines:
            line = line.rstrip("\n")
            match = definition.match(line)
            if match:
                kind, key, text = match.groups()
                table = objects if kind.endswith("ob") else names
                if text is not None:
                    table[key] = text
                if kind == "ob":
                    in_binary = os.path.realpath(objects[key]) == binary
                elif kind == "fn":
                    current = None
                    if in_binary:
                        name = re.sub(r"'\d+$", "", names[key])  # callgrind's recursion depth suffix
                        current = name_at(int(name, 16)) if name.startswith("0x") else name
                        if current is not None:
                            costs[current] += 0
                continue
            if line.startswith("calls="):
                after_call = True  # the next cost line is the call's inclusive cost
            elif line[:1] in COST_LINE_STARTS:
                fields = line.split()
                if current is not None and not after_call and len(fields) >= 2 and fields[1].isdigit():
                    costs[current] += int(fields[1])
                after_call = False
    return costs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.strip())
    binary = os.path.realpath(sys.argv[1])
    symbols = functions(binary)
    starts = [address for address, _, _ in symbols]

    def name_at(address):
        i = bisect.bisect_right(starts, address) - 1
        if i >= 0 and address < symbols[i][0] + max(symbols[i][1], 1):
            return symbols[i][2]
        return None

    sizes = {name: size for _, size, name in symbols}
    ran, listed = [], set()
    for profile in sys.argv[2:]:
        costs = self_costs(profile, binary, name_at)
        first_here = [name for name in costs if name in sizes and name not in listed]
        ran += sorted(first_here, key=lambda name: (-costs[name], name))
        listed.update(first_here)
    total = sum(sizes[name] for name in ran)
    print(f"{len(ran)} functions ran, {total / 1048576:.2f} MB of code", file=sys.stderr)
    print("\n".join(ran))


if __name__ == "__main__":
    main()
