#!/usr/bin/env python3
"""Pools the history bench's runs: recording's cost at p50 and p99 over many runs, not one.

usage: bench/pool.py [--all] [FILE]
FILE (default bench/history-runs.csv, next to this script) holds a line per run of
`bench/run.sh --only history`: the ratios on ÷ off at p50 and p99, each with the 95 % interval
`bench/tail.py` printed for it. Without --all only the runs of the current code count.

One run's interval comes from drawing its own sets again, so it says how far that run could have
landed, not how far two runs on two days land apart. Runs of the same code do differ by more than
that (a slow machine, a page cache still warm from a build), so each ratio is pooled three ways on
the log scale:
- fixed effect: the runs weighed by their intervals, as if they all measured one true ratio;
- random effects (DerSimonian and Laird): a spread between runs (tau) estimated from how far they
  disagree, added to each run's own variance, so that disagreeing runs widen the interval;
- the same mean with the Hartung and Knapp interval (Student's t with runs − 1 degrees of freedom),
  the cautious one when the runs are few; this is the one the target is judged by.
And the prediction interval: where the next run's ratio should land. The window's throughput (three
unpaired pairs a run, no interval) is given as the median and range over the runs.
"""
import csv
import math
import pathlib
import statistics
import sys

Z = 1.959964
# Student's t, two-sided 95 %, by degrees of freedom.
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
TARGET = 1.05


def t975(df):
    return T975[df - 1] if df <= len(T975) else Z


def pool(runs):
    """runs: (ratio, low, high) triples. Returns the pooled figures on the ratio scale."""
    y = [math.log(ratio) for ratio, _, _ in runs]
    variance = [((math.log(high) - math.log(low)) / (2 * Z)) ** 2 for _, low, high in runs]
    k = len(runs)
    w = [1 / v for v in variance]
    fixed = sum(wi * yi for wi, yi in zip(w, y)) / sum(w)
    q = sum(wi * (yi - fixed) ** 2 for wi, yi in zip(w, y))
    c = sum(w) - sum(wi * wi for wi in w) / sum(w)
    tau2 = max(0.0, (q - (k - 1)) / c) if k > 1 else 0.0
    wr = [1 / (v + tau2) for v in variance]
    mean = sum(wi * yi for wi, yi in zip(wr, y)) / sum(wr)
    se = math.sqrt(1 / sum(wr))
    # Hartung-Knapp, never narrower than the plain random-effects standard error.
    hk = math.sqrt(sum(wi * (yi - mean) ** 2 for wi, yi in zip(wr, y)) / ((k - 1) * sum(wr))) if k > 1 else se
    t = t975(max(k - 1, 1))

    def interval(centre, spread, z):
        return [round(math.exp(centre - z * spread), 4), round(math.exp(centre + z * spread), 4)]

    return {
        "runs": k,
        "fixed": round(math.exp(fixed), 4),
        "fixed_ci": interval(fixed, math.sqrt(1 / sum(w)), Z),
        "random": round(math.exp(mean), 4),
        "random_ci": interval(mean, se, Z),
        "hartung_knapp_ci": interval(mean, max(hk, se), t),
        "prediction": interval(mean, math.sqrt(tau2 + se * se), t),
        "tau": round(math.sqrt(tau2), 4),
        "i2_percent": round(max(0.0, (q - (k - 1)) / q) * 100) if q > 0 else 0,
    }


def main():
    arguments = [a for a in sys.argv[1:] if a != "--all"]
    everything = "--all" in sys.argv[1:]
    path = pathlib.Path(arguments[0]) if arguments else pathlib.Path(__file__).with_name("history-runs.csv")
    with path.open() as file:
        rows = [row for row in csv.DictReader(line for line in file if not line.startswith("#"))]
    chosen = [row for row in rows if everything or row["current"] == "1"]
    if len(chosen) < 2:
        sys.exit(f"bench/pool.py: {len(chosen)} run(s) in {path}; pooling needs two or more")
    print(f"{len(chosen)} runs ({'all' if everything else 'the current code'}): {', '.join(r['run'] for r in chosen)}")
    for figure in ("p50", "p99"):
        pooled = pool([(float(r[figure]), float(r[figure + "_lo"]), float(r[figure + "_hi"])) for r in chosen])
        low, high = pooled["hartung_knapp_ci"]
        verdict = "met" if high < TARGET else "not shown"
        print(f"{figure} on ÷ off: random effects {pooled['random']:.3f}× "
              f"(Hartung-Knapp {low:.3f}–{high:.3f}×; DerSimonian-Laird "
              f"{pooled['random_ci'][0]:.3f}–{pooled['random_ci'][1]:.3f}×), fixed effect "
              f"{pooled['fixed']:.3f}× ({pooled['fixed_ci'][0]:.3f}–{pooled['fixed_ci'][1]:.3f}×), "
              f"spread between runs tau {pooled['tau']:.3f} (I² {pooled['i2_percent']} %), next run "
              f"{pooled['prediction'][0]:.3f}–{pooled['prediction'][1]:.3f}×: within 5 % {verdict}")
    windows = sorted(float(r["window"]) for r in chosen if r.get("window"))
    if windows:
        print(f"window throughput on ÷ off: median {statistics.median(windows):.2f}× over {len(windows)} runs "
              f"({windows[0]:.2f}–{windows[-1]:.2f}×; a run's figure has no interval)")


if __name__ == "__main__":
    main()
