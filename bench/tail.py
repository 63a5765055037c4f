#!/usr/bin/env python3
"""The p50 and p99 of the history bench's round trips with recording on and off, paired block by block.

usage: bench/tail.py FILE
FILE is what `loadgen -m paired -B ON,OFF,OFF2 -o FILE` wrote: a line "SET SLOT GATEWAY LATENCY" per
answered write, GATEWAY 0 the gateway recording history (on), 1 one without (off) and 2 a second one
without (off2: how far two gateways alike move apart on this machine, the noise). Each set holds one
block of each gateway, back to back at one rate, so a set's three blocks saw the same state of the
machine, and a drift of the load over the run weighs on the three alike.

Prints one JSON object: each side's p50 and p99 over all its writes; the ratios on ÷ off (the cost of
recording), off2 ÷ off (the noise) and on ÷ off2, each with a 95 % interval by a block bootstrap that
draws whole sets again with replacement (a set's three blocks always together), REPEATS times; the
p99 ratios in each quarter of the run (does the ratio drift with the load?); the same interval with
the sets drawn in runs of RUN consecutive ones (a slow spell longer than a set stays together: if this
interval is much wider, the sets are not independent enough for the first one); and the carry-over:
the p99 of the blocks of off and off2 that came right after a block of on, against those after the
other gateway without recording (the history writer commits a block's last batch up to a second
after it, into the next block: if that cost shows, on ÷ off understates recording). Needs numpy.
"""
import json
import sys

import numpy

REPEATS = 2000
RUN = 4
SIDES = ("on", "off", "off2")
RATIOS = (("on", "on", "off"), ("noise", "off2", "off"), ("on_off2", "on", "off2"))


def percentile(sorted_values, p):
    """The p (0...1) percentile as bench/load.h takes it."""
    if len(sorted_values) == 0:
        return 0.0
    return float(sorted_values[int(p * (len(sorted_values) - 1) + 0.5)])


class Side:
    """One gateway's latencies sorted once, with the set of each, for percentiles of any draw of sets."""

    def __init__(self, latencies, sets, set_count):
        order = numpy.argsort(latencies, kind="stable")
        self.values = latencies[order]
        self.sets = sets[order]
        self.set_count = set_count

    def percentiles(self, multiplicity, ps):
        """The percentiles ps of the writes of the sets drawn `multiplicity` times each."""
        counts = numpy.cumsum(multiplicity[self.sets])
        total = int(counts[-1])
        ranks = [int(p * (total - 1) + 0.5) for p in ps]
        return [float(self.values[numpy.searchsorted(counts, rank + 1)]) for rank in ranks]


def bootstrap(sides, set_count, run, generator):
    """REPEATS draws of set_count sets (in runs of `run` consecutive ones): each side's p50 and p99."""
    draws = {side: numpy.empty((REPEATS, 2)) for side in SIDES}
    starts = max(set_count - run + 1, 1)
    for repeat in range(REPEATS):
        first = generator.integers(0, starts, (set_count + run - 1) // run)
        drawn = (first[:, None] + numpy.arange(run)[None, :]).ravel()[:set_count]
        multiplicity = numpy.bincount(numpy.minimum(drawn, set_count - 1), minlength=set_count)
        for side in SIDES:
            draws[side][repeat] = sides[side].percentiles(multiplicity, (0.5, 0.99))
    return draws


def main(path):
    table = numpy.loadtxt(path, ndmin=2)
    if table.size == 0:
        sys.exit(f"tail.py: no writes in {path}")
    sets, slots, gateways, latencies = table[:, 0].astype(int), table[:, 1].astype(int), table[:, 2].astype(int), table[:, 3]
    set_count = int(sets.max()) + 1
    if any(not numpy.any(gateways == g) for g in range(len(SIDES))):
        sys.exit(f"tail.py: {path} lacks a gateway")

    figures = {"sets": set_count}
    sides = {}
    for g, side in enumerate(SIDES):
        mine = gateways == g
        sides[side] = Side(latencies[mine], sets[mine], set_count)
        figures[f"{side}_writes"] = int(mine.sum())
        figures[f"{side}_p50_ms"] = round(percentile(sides[side].values, 0.5), 3)
        figures[f"{side}_p99_ms"] = round(percentile(sides[side].values, 0.99), 3)

    generator = numpy.random.default_rng(51)
    single = bootstrap(sides, set_count, 1, generator)
    runs = bootstrap(sides, set_count, RUN, generator)
    for name, top, bottom in RATIOS:
        for column, p in ((0, "p50"), (1, "p99")):
            figures[f"{p}_{name}"] = round(figures[f"{top}_{p}_ms"] / figures[f"{bottom}_{p}_ms"], 3)
            low, high = numpy.percentile(single[top][:, column] / single[bottom][:, column], [2.5, 97.5])
            figures[f"{p}_{name}_low"], figures[f"{p}_{name}_high"] = round(float(low), 3), round(float(high), 3)
        low, high = numpy.percentile(runs[top][:, 1] / runs[bottom][:, 1], [2.5, 97.5])
        figures[f"p99_{name}_low_runs"], figures[f"p99_{name}_high_runs"] = round(float(low), 3), round(float(high), 3)
    figures["run"] = RUN

    # The p99 ratios in each quarter of the run.
    quarters = numpy.array_split(numpy.arange(set_count), 4)
    for name, top, bottom in RATIOS:
        ratios = []
        for quarter in quarters:
            if len(quarter) == 0:
                continue
            within = {}
            for side in (top, bottom):
                g = SIDES.index(side)
                within[side] = numpy.sort(latencies[(gateways == g) & (sets >= quarter[0]) & (sets <= quarter[-1])])
            ratios.append(percentile(within[top], 0.99) / max(percentile(within[bottom], 0.99), 1e-9))
        figures[f"p99_{name}_quarters"] = " ".join(f"{ratio:.2f}" for ratio in ratios)

    # Carry-over: which gateway's block came right before each block (the last of the set before for
    # a set's first), and the p99 of off's and off2's blocks by it.
    block_of = {}
    for s, slot, g in set(zip(sets.tolist(), slots.tolist(), gateways.tolist())):
        block_of[s, slot] = g
    slot_count = len(SIDES)
    before = numpy.full(len(latencies), -1)
    for (s, slot), g in block_of.items():
        previous = block_of.get((s, slot - 1) if slot > 0 else (s - 1, slot_count - 1), -1)
        before[(sets == s) & (slots == slot)] = previous
    for g, side in ((1, "off"), (2, "off2")):
        other = 3 - g
        after_on = numpy.sort(latencies[(gateways == g) & (before == 0)])
        after_other = numpy.sort(latencies[(gateways == g) & (before == other)])
        if len(after_on) and len(after_other):
            figures[f"{side}_p99_after_on"] = round(percentile(after_on, 0.99) / percentile(after_other, 0.99), 3)
    print(json.dumps(figures, separators=(",", ":")))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/tail.py FILE")
    main(sys.argv[1])
