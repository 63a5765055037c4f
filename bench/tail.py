#!/usr/bin/env python3
"""The p99 of the history bench's round trips with recording on and off, pooled over its rounds.

usage: bench/tail.py DIR
DIR holds SIDE-ROUND.txt for the sides on, off and off2 (a second gateway without recording: the
noise), each the latencies in ms of one run at a fixed rate in the order they were answered
(loadgen -o). Prints one JSON object: each side's p50 and p99 over all its runs, on ÷ off and
off2 ÷ off of them, the same ratio per round (the runs of one round are back to back), and a 95 %
interval for the pooled ratios by a two-level bootstrap: the rounds drawn again with replacement
(the same rounds for every side, so the drift of the machine's load between rounds shows in the
interval but does not favour a side), then within each drawn run its blocks of BLOCK answers (a
second at 1,000/s, so a slow spell stays together as it happened); the ratio of the drawn sides'
p99s, REPEATS times. Without numpy the interval is left out.
"""
import json
import os
import re
import statistics
import sys

BLOCK = 1000
REPEATS = 2000
SIDES = ("on", "off", "off2")


def percentile(sorted_values, p):
    """The p (0...1) percentile as bench/load.h takes it."""
    if not sorted_values:
        return 0.0
    return sorted_values[int(p * (len(sorted_values) - 1) + 0.5)]


def main(directory):
    runs = {side: {} for side in SIDES}
    for name in os.listdir(directory):
        match = re.fullmatch(r"(on|off|off2)-(\d+)\.txt", name)
        if match:
            with open(os.path.join(directory, name)) as file:
                runs[match[1]][int(match[2])] = [float(line) for line in file if line.strip()]
    rounds = sorted(set(runs["on"]) & set(runs["off"]) & set(runs["off2"]))
    if not rounds:
        sys.exit(f"tail.py: no complete round in {directory}")

    figures = {"rounds": len(rounds)}
    pooled = {}
    for side in SIDES:
        values = sorted(v for r in rounds for v in runs[side][r])
        pooled[side] = values
        figures[f"{side}_writes"] = len(values)
        figures[f"{side}_p50_ms"] = round(percentile(values, 0.5), 3)
        figures[f"{side}_p99_ms"] = round(percentile(values, 0.99), 3)
    for side, name in (("on", "on"), ("off2", "noise")):
        figures[f"p50_{name}"] = round(figures[f"{side}_p50_ms"] / figures["off_p50_ms"], 3)
        figures[f"p99_{name}"] = round(figures[f"{side}_p99_ms"] / figures["off_p99_ms"], 3)
        per_round = [
            percentile(sorted(runs[side][r]), 0.99) / percentile(sorted(runs["off"][r]), 0.99) for r in rounds
        ]
        figures[f"p99_{name}_rounds"] = " ".join(f"{ratio:.2f}" for ratio in per_round)
        figures[f"p99_{name}_median"] = round(statistics.median(per_round), 3)
    # Recording against the second gateway without it: the off one is no truer a baseline.
    figures["p99_on_off2"] = round(figures["on_p99_ms"] / figures["off2_p99_ms"], 3)
    figures["p99_on_off2_rounds"] = " ".join(
        f"{percentile(sorted(runs['on'][r]), 0.99) / percentile(sorted(runs['off2'][r]), 0.99):.2f}" for r in rounds)
    try:
        import numpy
    except ImportError:
        print(json.dumps(figures, separators=(",", ":")))
        return
    generator = numpy.random.default_rng(51)

    # Each run cut into blocks; a draw takes as many rounds as there are, with replacement and the
    # same for every side (the runs of a round are measured back to back, so the load of the moment
    # weighs on all three alike), then within each drawn run as many of its blocks, with replacement.
    cut = {side: {r: [numpy.asarray(runs[side][r][i:i + BLOCK]) for i in range(0, len(runs[side][r]), BLOCK)]
                  for r in rounds} for side in SIDES}
    draws = {side: numpy.empty(REPEATS) for side in SIDES}
    for repeat in range(REPEATS):
        drawn_rounds = [rounds[i] for i in generator.integers(0, len(rounds), len(rounds))]
        for side in SIDES:
            drawn = numpy.concatenate([
                run[i] for run in (cut[side][r] for r in drawn_rounds) for i in generator.integers(0, len(run), len(run))
            ])
            rank = int(0.99 * (len(drawn) - 1) + 0.5)
            draws[side][repeat] = numpy.partition(drawn, rank)[rank]
    for side, name in (("on", "on"), ("off2", "noise")):
        low, high = numpy.percentile(draws[side] / draws["off"], [2.5, 97.5])
        figures[f"p99_{name}_low"] = round(float(low), 3)
        figures[f"p99_{name}_high"] = round(float(high), 3)
    print(json.dumps(figures, separators=(",", ":")))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: bench/tail.py DIR")
    main(sys.argv[1])
