#!/usr/bin/env bash
# Runs every libFuzzer target for SECONDS seconds each (first argument, default 10), starting from
# the committed seed corpus in Tests/Fuzz/corpus/<target>. New interesting inputs go to a scratch corpus
# under .build-fuzz/corpus (never into the repository); a crash is saved as
# Tests/Fuzz/crashes/<target>-crash-<hash> and fails the run: add it to Tests/Fuzz/corpus/<target> once fixed,
# so the replay in `make test` keeps it fixed. Expects the targets built by `make fuzz-build`.
set -euo pipefail

seconds=${1:-10}
swift=${SWIFT:-swift}
bin=$("$swift" build --scratch-path .build-fuzz --show-bin-path)
mkdir -p Tests/Fuzz/crashes
for target in topics payload config; do
    work=.build-fuzz/corpus/$target
    mkdir -p "$work"
    echo "fuzz-$target: ${seconds}s from $(ls Tests/Fuzz/corpus/$target | wc -l) seeds"
    log=.build-fuzz/fuzz-$target.log
    status=0
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0 timeout $((seconds + 120)) "$bin/fuzz-$target" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -max_len=70000 -print_final_stats=1 \
        -artifact_prefix="Tests/Fuzz/crashes/$target-" "$work" "Tests/Fuzz/corpus/$target" >"$log" 2>&1 || status=$?
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb|==[0-9]+==ERROR|SUMMARY)|Test unit written" "$log" || true
    if ((status != 0)); then
        echo "fuzz-$target: exit status $status; the end of $log:" >&2
        tail -20 "$log" >&2
        exit 1
    fi
    if ls Tests/Fuzz/crashes/"$target"-* >/dev/null 2>&1; then
        echo "fuzz-$target: crashed; see Tests/Fuzz/crashes/" >&2
        exit 1
    fi
done
