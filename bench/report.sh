#!/usr/bin/env bash
# Turns bench/out/results.jsonl (one JSON object per measurement, written by bench/run.sh) into the
# table on stdout, bench/out/results.json, and the figures between the markers of docs/benchmarks.md.
#
# usage: bench/report.sh RESULTS.jsonl DURATION_SECONDS QUICK
set -euo pipefail
cd "$(dirname "$0")/.."
results=$1 duration=$2 quick=$3
out=bench/out
doc=docs/benchmarks.md

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
mosquitto_version=$({ "$(command -v mosquitto || echo /usr/sbin/mosquitto)" -h 2>&1 || true; } | awk '/^mosquitto version/ { print $3; exit }')
machine="$(nproc) cores, $cpu_model, $(awk '/^MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo) RAM, Linux $(uname -r), mosquitto $mosquitto_version, $({ swift --version 2>/dev/null || true; } | sed -n '1s/ (.*//p')"
date=$(date -u +"%Y-%m-%d %H:%M UTC")
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git status --porcelain -- Sources Package.swift bench 2>/dev/null | grep -q . && echo " (with uncommitted changes)" || true)

{
    printf '{"date":"%s","commit":"%s","machine":"%s","duration_s":%s,"quick":%s,"results":[\n' \
        "$date" "$commit$dirty" "$machine" "$duration" "$quick"
    sed '$!s/$/,/' "$results"
    printf ']}\n'
} >"$out/results.json"

tables=$(awk '
function get(key,    rest) {
    if (!match($0, "\"" key "\":\"?[^,}\"]*")) return ""
    rest = substr($0, RSTART, RLENGTH)
    sub("^\"" key "\":\"?", "", rest)
    return rest
}
function ratio(a, b) { return b > 0 ? sprintf("%.2f×", a / b) : "–" }
function mark(ok) { return ok ? "met" : "**missed**" }
function load_name(l) { return l == "window" ? "window " window_size : l "/s" }
BEGIN { window_size = 100; lost_total = 0; lost_runs = 0 }
get("scenario") != "zigbee2mqtt" { lost = get("lost"); if (lost != "" && lost > 0) { lost_total += lost; lost_runs++ } }
get("scenario") == "roundtrip" {
    gw = get("gateway"); key = get("qos") SUBSEP get("load")
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    rt = rt sprintf("| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %s | %.2f |\n", get("qos"), \
        load_name(get("load")), gw, get("db") == "none" ? "–" : get("db"), get("p50_ms"), get("p90_ms"), \
        get("p99_ms"), get("max_ms"), get("throughput"), get("lost"), cpu10k)
    if (gw == "floor") { f50[key] = get("p50_ms"); f99[key] = get("p99_ms"); ftp[key] = get("throughput"); next }
    ratios = ratios sprintf("| %s | %s | %s | %s | %s | %s |\n", get("qos"), load_name(get("load")), get("db"), \
        ratio(get("p50_ms"), f50[key]), ratio(get("p99_ms"), f99[key]), ratio(get("throughput"), ftp[key]))
    if (get("qos") == 1 && get("db") == "file") {
        if (get("load") == "1000") { p50r = get("p50_ms") / f50[key]; p99r = get("p99_ms") / f99[key] }
        if (get("load") == "window") tpr = get("throughput") / ftp[key]
    }
}
get("scenario") == "actionset" {
    actions = actions sprintf("| %s | %s | %s | %.1f | %.1f | %s |\n", get("db"), get("writes"), get("runs"), \
        get("p50_ms"), get("max_ms"), get("lost"))
}
get("scenario") == "zigbee2mqtt-setup" {
    z2m_setup = get("setup_ms"); z2m_rest = get("idle_ms"); z2m_bytes = get("bridge_devices_bytes"); z2m_idle = get("rss_idle_mb")
}
get("scenario") == "zigbee2mqtt" {
    gw = get("gateway"); z2m_devices = get("devices")
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    z2m = z2m sprintf("| %s | %s/s | %s | %s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %s | %.2f | %s |\n", \
        get("round"), get("rate"), gw, get("db") == "none" ? "–" : get("db"), get("offered"), get("throughput"), \
        get("p50_ms"), get("p90_ms"), get("p99_ms"), get("max_ms"), get("lost"), get("stale"), cpu10k, get("rss_load_mb"))
    key = get("round") SUBSEP get("point")
    if (gw == "floor") { zf50[key] = get("p50_ms"); zf99[key] = get("p99_ms"); zftp[key] = get("throughput"); next }
    z2m_ratios = z2m_ratios sprintf("| %s | %s/s | %s | %s | %s |\n", get("round"), get("rate"), \
        ratio(get("p50_ms"), zf50[key]), ratio(get("p99_ms"), zf99[key]), ratio(get("throughput"), zftp[key]))
    z2m_runs++
    z2m_lost += get("lost"); z2m_stale += get("stale")
    if (get("point") == "nominal") { z2m_nominal++; z2m_rate = get("rate"); if (get("throughput") < 0.98 * get("rate")) z2m_slow++ }
}
get("scenario") == "scale" {
    n = get("accessories"); gw = get("gateway")
    idle[n, gw] = get("rss_idle_mb")
    if (gw == "homegate") { first[n] = get("first_start_ms"); start[n] = get("startup_ms"); sizes[++count] = n }
}
get("scenario") == "scale-load" {
    n = get("accessories"); gw = get("gateway")
    peak[n, gw] = get("rss_load_mb"); tput[n, gw] = get("throughput")
    cpu[n, gw] = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
}
END {
    print "### Command round trip: 1,000 accessories, homegate and the floor on one broker\n"
    print "Latency from publishing the write to receiving the state (ms); throughput in answered writes/s;"
    print "CPU: seconds of the gateway process per 10,000 writes.\n"
    print "| QoS | load | gateway | database | p50 | p90 | p99 | max | writes/s | lost | CPU s/10k |"
    print "|---|---|---|---|---|---|---|---|---|---|---|"
    printf "%s\n", rt
    print "### homegate ÷ floor (same point, measured right after the floor)\n"
    print "| QoS | load | database | p50 | p99 | throughput |"
    print "|---|---|---|---|---|---|"
    printf "%s\n", ratios
    print "### Scale of the home (QoS 1, database on file)\n"
    print "Start: process start until the last value topic is at the broker (database already built; first"
    print "start: building the home into an empty database). RSS under load and CPU: " window_size " writes in flight.\n"
    print "| accessories | first start (ms) | start (ms) | RSS idle (MB) | RSS under load (MB) | CPU s/10k | writes/s | floor RSS (MB) | floor CPU s/10k | floor writes/s |"
    print "|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= count; i++) {
        n = sizes[i]
        printf "| %s | %s | %s | %s | %s | %.2f | %.0f | %s | %.2f | %.0f |\n", n, first[n], start[n], idle[n, "homegate"], \
            peak[n, "homegate"], cpu[n, "homegate"], tput[n, "homegate"], peak[n, "floor"], cpu[n, "floor"], tput[n, "floor"]
    }
    print "\n### Action sets: 50 writes, until all 50 states are published (ms)\n"
    print "| database | writes | runs | p50 | max | lost |"
    print "|---|---|---|---|---|---|"
    printf "%s\n", actions
    if (z2m_runs > 0) {
        print "### zigbee2mqtt state updates: " z2m_devices " devices, homegate and the floor on one broker\n"
        print "Latency from the publish of a device state by zigbee2mqtt to the retained topic of the gateway with the new"
        print "temperature (ms); updates/s: updates answered ÷ (first publish → last answer); lost: updates"
        print "whose value never arrived; stale: devices whose topic did not end at the last value sent; CPU:"
        print "seconds of the gateway process per 10,000 updates; RSS: peak under load.\n"
        print "| round | load | gateway | database | offered/s | updates/s | p50 | p90 | p99 | max | lost | stale | CPU s/10k | RSS (MB) |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        printf "%s\n", z2m
        print "homegate ÷ floor (same round, measured right after the floor):\n"
        print "| round | load | p50 | p99 | updates/s |"
        print "|---|---|---|---|---|"
        printf "%s\n", z2m_ratios
        printf "Start with zigbee2mqtt (empty database), from the start of the homegate process: all %s devices of\n", z2m_devices
        printf "a %.1f MB `bridge/devices` in a home (1 addHome, %d addRoom, %s addAccessory, every answer received)\n", \
            z2m_bytes / 1048576, int((z2m_devices + 19) / 20), z2m_devices
        printf "after %s ms; homegate at rest (under 5 %% of a core for a second) after %s ms, RSS then %s MB.\n\n", \
            z2m_setup, z2m_rest, z2m_idle
    }
    print "### Targets\n"
    print "| target | figure | |"
    print "|---|---|---|"
    printf "| round-trip p50 ≤ 1.5× the floor (QoS 1, 1,000/s; aim 1.1×) | %.2f× | %s |\n", p50r, mark(p50r <= 1.5)
    printf "| round-trip p99 ≤ 2× the floor (QoS 1, 1,000/s) | %.2f× | %s |\n", p99r, mark(p99r <= 2)
    printf "| sustained throughput ≥ ½ the floor (QoS 1, window) | %.2f× | %s |\n", tpr, mark(tpr >= 0.5)
    if ((10000) in start) printf "| 10,000 accessories on the broker within 2 s of start | %s ms | %s |\n", start[10000], mark(start[10000] <= 2000)
    printf "| under 30 MB RSS with 1,000 accessories (under load) | %s MB | %s |\n", peak[1000, "homegate"], mark(peak[1000, "homegate"] < 30)
    printf "| zero commands lost in every run | %d lost (runs with a loss: %d) | %s |\n", lost_total, lost_runs, mark(lost_total == 0)
    if (z2m_runs > 0) {
        printf "| zigbee2mqtt: %s devices at %s updates/s, each update on its retained topic | %d of %d runs below 98 %% of the rate | %s |\n", \
            z2m_devices, z2m_rate, z2m_slow, z2m_nominal, mark(z2m_slow == 0)
        printf "| zigbee2mqtt: zero updates lost in every run | %d lost, %d devices stale | %s |\n", \
            z2m_lost, z2m_stale, mark(z2m_lost == 0 && z2m_stale == 0)
    }
}' "$results")

printf '\n%s\n\nmachine: %s\n%s, commit %s%s, %s s\n' "$tables" "$machine" "$date" "$commit" "$dirty" "$duration"

if [[ $quick == true ]]; then
    echo "(--quick: docs/benchmarks.md left as it is)"
    exit 0
fi
figures=$(printf '<!-- bench:begin (written by bench/report.sh; edit outside the markers) -->\n_%s on %s; commit %s%s; the whole run took %s s._\n\n%s\n<!-- bench:end -->' \
    "$date" "$machine" "$commit" "$dirty" "$duration" "$tables")
awk -v figures="$figures" '
    /^<!-- bench:begin/ { print figures; skipping = 1; next }
    /^<!-- bench:end/ { skipping = 0; next }
    !skipping { print }' "$doc" >"$doc.new"
mv "$doc.new" "$doc"
echo "wrote $doc and $out/results.json"
