#!/usr/bin/env bash
# Turns bench/out/results.jsonl (one JSON object per measurement, written by bench/run.sh) into the
# table on stdout, bench/out/results.json, and the figures between the markers of docs/benchmarks.md.
#
# usage: bench/report.sh RESULTS.jsonl DURATION_SECONDS QUICK [partial]
#   (partial: only some scenarios ran, bench/run.sh --only; docs/benchmarks.md is left alone)
set -euo pipefail
cd "$(dirname "$0")/.."
results=$1 duration=$2 quick=$3 partial=${4:-}
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
    # A number as a number: awk compares a string with a number as strings ("844" > "1000").
    if (rest ~ /^-?[0-9]+(\.[0-9]+)?$/) return rest + 0
    return rest
}
# The median of values[1..n] (sorts them in place).
function median(values, n,    i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && values[j - 1] > values[j]; j--) { t = values[j]; values[j] = values[j - 1]; values[j - 1] = t }
    return n % 2 ? values[(n + 1) / 2] : (values[n / 2] + values[n / 2 + 1]) / 2
}
# values[1..n] as "1.23×, 1.45×", in the order measured.
function listed(values, n,    i, text) {
    for (i = 1; i <= n; i++) text = text (i > 1 ? ", " : "") sprintf("%.2f×", values[i])
    return text
}
function ratio(a, b) { return b > 0 ? sprintf("%.2f×", a / b) : "–" }
function mark(ok) { return ok ? "met" : "**missed**" }
# interval(LOW, HIGH): " (95 % interval LOW–HIGH×)", or nothing without one.
function settled(low, high) { return high != "" && high <= 1.05 ? "met" : low != "" && low > 1.05 ? "**missed**" : "not settled" }
function interval(low, high) { return low != "" ? sprintf(" (95 %% interval %s–%s×)", low, high) : "" }
function load_name(l) { return l == "window" ? "window " window_size : l "/s" }
BEGIN { window_size = 100; lost_total = 0; lost_runs = 0 }
get("scenario") != "zigbee2mqtt" && get("scenario") != "slowdisk-z2m" {
    lost = get("lost"); if (lost != "" && lost > 0) { lost_total += lost; lost_runs++ }
}
get("scenario") == "roundtrip" {
    gw = get("gateway"); key = get("qos") SUBSEP get("load")
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    broker10k = get("broker_cpu_s") != "" && get("answered") > 0 ? sprintf("%.2f", get("broker_cpu_s") * 10000 / get("answered")) : "–"
    switches = get("context_switches") != "" && get("answered") > 0 ? sprintf("%.1f", get("context_switches") / get("answered")) : "–"
    rt = rt sprintf("| %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.0f | %s | %.2f | %s | %s |\n", get("qos"), \
        load_name(get("load")), gw, get("db") == "none" ? "–" : get("db"), get("p50_ms"), get("p90_ms"), \
        get("p99_ms"), get("max_ms"), get("throughput"), get("lost"), cpu10k, broker10k, switches)
    if (gw == "floor") { f50[key] = get("p50_ms"); f99[key] = get("p99_ms"); ftp[key] = get("throughput"); next }
    ratios = ratios sprintf("| %s | %s | %s | %s | %s | %s |\n", get("qos"), load_name(get("load")), get("db"), \
        ratio(get("p50_ms"), f50[key]), ratio(get("p99_ms"), f99[key]), ratio(get("throughput"), ftp[key]))
    if (get("qos") == 1 && get("db") == "file") {
        if (get("load") == "1000") { pairs++; p50s[pairs] = get("p50_ms") / f50[key]; p99s[pairs] = get("p99_ms") / f99[key] }
        if (get("load") == "window") { windows++; tprs[windows] = get("throughput") / ftp[key] }
    }
}
get("scenario") == "serving" {
    gw = get("gateway"); key = get("load")
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    switches = get("context_switches") != "" && get("answered") > 0 ? sprintf("%.1f", get("context_switches") / get("answered")) : "–"
    serving = serving sprintf("| %s | %s | %.2f | %.2f | %.0f | %s | %.2f | %s |\n", load_name(get("load")), gw, \
        get("p50_ms"), get("p99_ms"), get("throughput"), get("lost"), cpu10k, switches)
    if (gw == "loop") { s50[key] = get("p50_ms"); stp[key] = get("throughput"); scpu[key] = cpu10k; next }
    serving_ratios = serving_ratios sprintf("| %s | %s | %s | %s |\n", load_name(get("load")), \
        ratio(get("p50_ms"), s50[key]), ratio(get("throughput"), stp[key]), ratio(cpu10k, scpu[key]))
}
get("scenario") == "history-roundtrip" {
    gw = get("gateway"); key = get("load") SUBSEP get("round")
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    hist = hist sprintf("| %s | %s | %s | %.2f | %.2f | %.0f | %s | %.2f |\n", load_name(get("load")), get("round"), gw, \
        get("p50_ms"), get("p99_ms"), get("throughput"), get("lost"), cpu10k)
    hr50[gw, key] = get("p50_ms"); hr99[gw, key] = get("p99_ms"); hrtp[gw, key] = get("throughput"); hrcpu[gw, key] = cpu10k
    # The ratios of a point once its round holds both it and off, whichever came first.
    for (i = 1; i <= 2; i++) if ((side = i == 1 ? "on" : "off2") && (side, key) in hr50 && ("off", key) in hr50 && !((side, key) in hdone)) {
        hdone[side, key] = 1
        hist_ratios = hist_ratios sprintf("| %s, round %s%s | %s | %s | %s | %s |\n", load_name(get("load")), get("round"), \
            side == "off2" ? ", off2 ÷ off (the noise)" : "", ratio(hr50[side, key], hr50["off", key]), ratio(hr99[side, key], hr99["off", key]), \
            ratio(hrtp[side, key], hrtp["off", key]), ratio(hrcpu[side, key], hrcpu["off", key]))
        if (side == "on" && get("load") == "window") { hwindows++; htprs[hwindows] = hrtp[side, key] / hrtp["off", key] }
    }
}
get("scenario") == "history-tail" {
    htail = sprintf("Paired at 1,000/s: %s sets of one block of %s s per gateway in turns%s (%s writes per gateway, %s lost; `bench/tail.py`; load average every 30 s: %s). ", \
        get("sets"), get("block_s"), (get("gap_s") + 0 > 0 ? ", " get("gap_s") " s apart" : ""), get("on_writes"), get("lost"), get("loads"))
    htail = htail sprintf("p50 off %s, on %s, off2 %s ms; p99 off %s, on %s, off2 %s ms; CPU over the run off %s, on %s, off2 %s s.\n\n", get("off_p50_ms"), get("on_p50_ms"), get("off2_p50_ms"), \
        get("off_p99_ms"), get("on_p99_ms"), get("off2_p99_ms"), get("off_cpu_s"), get("on_cpu_s"), get("off2_cpu_s"))
    htail = htail "| ratio | p50 | p99 | p99 by quarter | p99 interval, sets drawn in runs of " get("run") " |\n|---|---|---|---|---|\n"
    split("on noise on_off2", hnames, " "); split("on ÷ off (recording)|off2 ÷ off (the noise)|on ÷ off2", hlabels, "|")
    for (i = 1; i <= 3; i++)
        htail = htail sprintf("| %s | %s×%s | **%s×**%s | %s | %s–%s× |\n", hlabels[i], get("p50_" hnames[i]), interval(get("p50_" hnames[i] "_low"), get("p50_" hnames[i] "_high")), \
            get("p99_" hnames[i]), interval(get("p99_" hnames[i] "_low"), get("p99_" hnames[i] "_high")), get("p99_" hnames[i] "_quarters"), \
            get("p99_" hnames[i] "_low_runs"), get("p99_" hnames[i] "_high_runs"))
    htail = htail sprintf("\nCarry-over (p99 of a block right after one of on ÷ after the other gateway without recording): off %s×, off2 %s×.", \
        get("off_p99_after_on"), get("off2_p99_after_on"))
    htail_on = get("p99_on"); htail_low = get("p99_on_low"); htail_high = get("p99_on_high"); htail_noise = get("p99_noise")
    htail_noise_low = get("p99_noise_low"); htail_noise_high = get("p99_noise_high"); htail_sets = get("sets")
    htail_apart = (get("gap_s") + 0 > 0 ? " in blocks " get("gap_s") " s apart" : "")
    htail_p50 = get("p50_on"); htail_p50_low = get("p50_on_low"); htail_p50_high = get("p50_on_high")
}
get("scenario") == "history-load" { history_load = get("load") }
get("scenario") == "history" {
    history_line = $0
    history_build = get("build"); history_series = get("series"); history_days = get("days")
    history_week_p50 = get("week_p50_ms"); history_week_p99 = get("week_p99_ms"); history_week_answer = get("week_answer")
    history_file = get("file_mb"); history_bound = get("bound_mb")
    history_growth = ""
    for (d = 1; d <= history_days; d++) if (get("day" d "_mb") != "" && (d == 1 || d == 7 || d == 10 || d == 20 || d == history_days))
        history_growth = history_growth (history_growth == "" ? "" : ", ") "day " d ": " get("day" d "_mb") " MB"
    history = sprintf("`homegate bench-history`, %s build: %s characteristics changing once a minute for %s simulated days (the store'"'"'s clock moved by the simulation, a batch a minute, retention every hour) in %s s.\n\n", \
        history_build, history_series, history_days, get("simulation_s"))
    history = history sprintf("- the file and its WAL: %s; the bound %s MB\n", history_growth, history_bound)
    history = history sprintf("- a week of one characteristic (answered as %s), %s runs: p50 %s ms, p99 %s ms\n", history_week_answer, get("queries"), history_week_p50, history_week_p99)
    history = history sprintf("- a day of its raw points (%s): p50 %s ms, p99 %s ms\n", get("day_points"), get("day_p50_ms"), get("day_p99_ms"))
}
get("scenario") == "timers" {
    timers_n = get("timers"); timers_seconds = get("seconds"); timers_without = get("cpu_s_without"); timers_with = get("cpu_s_with")
    timers_burst = get("burst"); timers_fired = get("fired"); timers_p50 = get("p50_ms"); timers_max = get("max_ms")
    timers = sprintf("%s timer automations in the home of 100 switches, the start with them %s ms (`--only timers`; load %s).\n\n", \
        timers_n, get("start_with_ms"), get("load"))
    timers = timers sprintf("- at rest over %s s: %s s CPU and %s context switches without them, %s s and %s with them (RSS %s MB)\n", \
        timers_seconds, timers_without, get("switches_without"), timers_with, get("switches_with"), get("rss_with_mb"))
    timers = timers sprintf("- %s due in one minute: %s fired; late by first %s ms, p50 %s ms, p99 %s ms, max %s ms (each runs the one-action action set Tick: one after another, as they write one switch)\n", \
        timers_burst, timers_fired, get("first_ms"), timers_p50, get("p99_ms"), timers_max)
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
get("scenario") == "layout" { layout_p50 = get("p50_ms"); layout_max = get("max_ms"); layout_n = get("answered") }
get("scenario") == "slowdisk-setup" { sync_ms = get("sync_ms"); slow_setup_ms = get("setup_ms"); slow_setup_syncs = get("syncs"); slow_devices = get("devices") }
get("scenario") == "slowdisk-z2m" {
    cpu10k = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
    span = get("throughput") > 0 ? get("answered") / get("throughput") : 0
    slow = slow sprintf("| %s s | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %s | %s | %s | %s | %.1f | %.2f |\n", get("window_s"), \
        get("offered"), get("throughput"), get("p50_ms"), get("p90_ms"), get("p99_ms"), get("max_ms"), get("lost"), \
        get("late"), get("stale"), get("syncs"), span > 0 ? get("syncs") / span : 0, cpu10k)
    if (get("window_s") > 0) {
        slow_rate = get("rate"); slow_tput = get("throughput"); slow_lost = get("lost") + get("stale")
    } else { slow_tput0 = get("throughput"); drain_limit = get("drain_limit_s") }
}
get("scenario") == "slowdisk-value-sync" {
    value_sync = value_sync sprintf("| %s s | %s | %s | %s |\n", get("window_s"), get("delays_ms") == "" ? "–" : get("delays_ms"), \
        get("unsynced") " of " get("samples"), get("limit_s"))
    if (get("window_s") > 0) {
        value_sync_max = get("max_ms"); value_unsynced = get("unsynced"); value_window = get("window_s")
        value_samples = get("samples"); value_limit = get("limit_s")
    }
}
get("scenario") == "slowdisk-layout" {
    slow_layout_p50 = get("p50_ms"); slow_layout_p90 = get("p90_ms"); slow_layout_min = get("min_ms"); slow_layout_max = get("max_ms")
    slow_layout_n = get("answered"); slow_layout_synced = get("synced_before_answer"); slow_layout_syncs = get("syncs")
}
get("scenario") == "slowdisk-roundtrip" {
    slow_rt = sprintf("| %.2f | %.2f | %.2f | %.2f | %.0f | %s | %s | %s | %s |", get("p50_ms"), get("p90_ms"), get("p99_ms"), \
        get("max_ms"), get("throughput"), get("lost"), get("syncs"), ratio(get("p50_ms"), f50[1 SUBSEP 1000]), \
        ratio(get("p99_ms"), f99[1 SUBSEP 1000]))
}
get("scenario") == "idle" {
    idle_s = get("seconds"); idle_cpu = get("cpu_s"); idle_switches = get("context_switches"); idle_threads = get("threads")
    idle_rss = get("rss_before_mb") " → " get("rss_after_mb")
}
get("scenario") == "memory" {
    memory = memory sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", get("build") == "hub" ? "hub (static Swift, stripped)" : "release", \
        get("rss_mb"), get("anon_mb"), get("file_mb"), get("shmem_mb"), get("file_binary_mb"), get("file_libraries_mb"), \
        get("anon_mappings_mb"), get("anon_heap_mb"), get("anon_in_files_mb"))
    if (get("build") == "hub") { hub_rss = get("rss_mb"); hub_quiet = get("rss_quiet_mb") }
    else { release_rss = get("rss_mb"); release_anon = get("anon_mb") }
}
get("scenario") == "soak" {
    soak_s = get("seconds"); soak_rate = get("rate"); soak_before = get("rss_before_mb"); soak_anon = get("rss_anon_after_mb")
    soak_count = split(get("rss_samples_mb"), soak_samples, " ")
    soak_min = soak_samples[1]; soak_max = soak_samples[1]
    for (i = 2; i <= soak_count; i++) {
        if (soak_samples[i] + 0 < soak_min + 0) soak_min = soak_samples[i]
        if (soak_samples[i] + 0 > soak_max + 0) soak_max = soak_samples[i]
    }
    soak_first = soak_samples[1]; soak_last = soak_samples[soak_count]
    soak_build = get("build") == "" ? "release" : get("build")
    soak_line = sprintf("Soak (" soak_build " build): %s s of commands at %s/s (%s answered, %s lost, p50 %s ms, p99 %s ms). RSS %s MB at rest before; sampled every 30 s: %s MB; RssAnon %s MB after.", \
        soak_s, soak_rate, get("answered"), get("lost"), get("p50_ms"), get("p99_ms"), soak_before, get("rss_samples_mb"), soak_anon)
}
get("scenario") == "flap" {
    flap_count = get("flaps"); flap_rounds = get("rounds"); rest = $0
    while (match(rest, /"accessories":[0-9]+,"cpu_us":[0-9.]+,"wall_us":[0-9.]+,"layout_us":[0-9.]+,"cpu_rounds_us":"[0-9. ]*"/)) {
        split(substr(rest, RSTART, RLENGTH), kv, /[:,]/)
        n = kv[2]; flap_cpu[n] = kv[4]; flap_wall[n] = kv[6]; flap_layout[n] = kv[8]; flap_sizes[++flap_n] = n
        flap_cpu_rounds[n] = kv[10]; gsub(/"/, "", flap_cpu_rounds[n]); gsub(/ /, ", ", flap_cpu_rounds[n])
        rest = substr(rest, RSTART + RLENGTH)
    }
}
get("scenario") == "hap" {
    hap_srp = sprintf("| %.1f | %.1f | %.2f |\n", get("srpControllerMedianMs"), get("aiohomekitSrpMedianMs"), \
        +get("aiohomekitSrpMedianMs") > 0 ? get("srpControllerMedianMs") / get("aiohomekitSrpMedianMs") : 0)
    hap = sprintf("| %.0f | %.1f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f |\n", get("pairSetupMedianMs"), \
        get("pairVerifyMedianMs"), get("readP50Ms"), get("readP99Ms"), get("writeP50Ms"), get("writeP99Ms"), \
        get("gatewayWriteP50Ms"), get("gatewayWriteP99Ms"), get("eventToTopicP50Ms"), get("eventToTopicP99Ms"))
}
get("scenario") == "bridge" {
    bridge_n = split("pairSetup pairVerify read write event", bridge_ops, " ")
    split("pair setup|pair verify (connect, M1–M4)|read (`GET /characteristics`)|write (`PUT`, to its answer)|event (another controller'"'"'s write → `EVENT`)", bridge_names, "|")
    split("setup verify read write event", bridge_short, " ")
    bridge_slower = 0; bridge_ratios = ""
    for (i = 1; i <= bridge_n; i++) {
        op = bridge_ops[i]; h50 = get("homegate_" op "_p50"); p50 = get("hapPython_" op "_p50")
        bridge = bridge sprintf("| %s | %s | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", bridge_names[i], get("homegate_" op "_n"), \
            h50, get("homegate_" op "_p90"), p50, get("hapPython_" op "_p90"), ratio(h50, p50), \
            ratio(get("homegate_" op "_p90"), get("hapPython_" op "_p90")))
        bridge_ratios = bridge_ratios (i > 1 ? ", " : "") bridge_short[i] " " ratio(h50, p50)
        if (p50 > 0 && h50 > p50) bridge_slower++
    }
    bridge = bridge sprintf("| MQTT write command → `EVENT` (homegate only) | %s | %.2f | %.2f | – | – | – | – |\n", \
        get("homegate_mqttEvent_n"), get("homegate_mqttEvent_p50"), get("homegate_mqttEvent_p90"))
    bridge_accessories = get("accessories")
}
get("scenario") == "bridge-memory" {
    r = get("round"); bridge_rounds[r] = 1
    if (get("bridge") == "with") { bwith[r] = get("rss_mb"); bwith_anon[r] = get("anon_mb"); bwith_bin[r] = get("file_binary_mb"); bsubscribed = get("controllers_subscribed_to") }
    else { bwithout[r] = get("rss_mb"); bwithout_anon[r] = get("anon_mb"); bwithout_bin[r] = get("file_binary_mb") }
}
get("scenario") == "hub-load" { hub_peak = get("rss_load_mb") }
get("scenario") == "hub-build" {
    hub = sprintf("%s MB as built, %s MB stripped (the default release build, Swift libraries shared: %s MB); `homegate --help` %s.\n", \
        get("binary_mb"), get("stripped_mb"), get("default_build_mb"), get("runs") == "true" ? "runs" : "**does not run**")
    hub = hub sprintf("It names (NEEDED) `%s`; with what those bring in, ldd lists `%s`.\n", get("needed"), get("libraries"))
    hub = hub sprintf("Its code layout: %s of the %s functions that scripts/hub/symbol-order.txt lists are in it; a function added or renamed since the profile is laid out with the cold code (`make hub-profile` writes a new list).\n", \
        get("order_found"), get("order_listed"))
    hub_mb = get("stripped_mb"); hub_runs = get("runs")
}
get("scenario") == "scale" {
    n = get("accessories"); gw = get("gateway")
    idle[n, gw] = get("rss_idle_mb")
    if (gw == "homegate") {
        first[n] = get("first_start_ms"); start[n] = get("startup_ms"); start_rounds[n] = get("startup_rounds_ms")
        devices_file[n] = get("devices_file_ms")
        sizes[++count] = n
    }
}
get("scenario") == "scale-load" {
    n = get("accessories"); gw = get("gateway")
    peak[n, gw] = get("rss_load_mb"); tput[n, gw] = get("throughput")
    cpu[n, gw] = get("answered") > 0 ? get("cpu_s") * 10000 / get("answered") : 0
}
END {
    if (rt != "") {
    print "### Command round trip: 1,000 accessories, homegate and the floor on one broker\n"
    print "Latency from publishing the write to receiving the state (ms); throughput in answered writes/s;"
    print "CPU: seconds of the gateway process per 10,000 writes, and of the broker meanwhile (on 2 cores the"
    print "gateway, the broker and the load generator share the CPU: where it runs short, their sum bounds the"
    print "window); switches/write: context switches per write of the threads of the gateway (how often a"
    print "thread went to sleep or was preempted: the hand-offs).\n"
    print "| QoS | load | gateway | database | p50 | p90 | p99 | max | writes/s | lost | CPU s/10k | broker CPU s/10k | switches/write |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    printf "%s\n", rt
    print "### homegate ÷ floor (same point, measured right after the floor)\n"
    print "| QoS | load | database | p50 | p99 | throughput |"
    print "|---|---|---|---|---|---|"
    printf "%s\n", ratios
    }
    if (serving != "") {
        print "### Serving libmosquitto: the gateway event loop against libmosquitto own thread\n"
        print "QoS 1, database in memory, the two gateways alternating on one broker (`--only serving`); CPU: seconds"
        print "of the gateway per 10,000 writes.\n"
        print "| load | serving | p50 | p99 | writes/s | lost | CPU s/10k | switches/write |"
        print "|---|---|---|---|---|---|---|---|"
        printf "%s\n", serving
        print "| load | p50 thread ÷ loop | writes/s thread ÷ loop | CPU thread ÷ loop |"
        print "|---|---|---|---|"
        printf "%s\n", serving_ratios
    }
    if (hist != "" || history != "") {
        print "### History (issue 51)\n"
        if (hist != "") {
        print "The command round trip with recording on and off: gateways on one broker, the home of 1,000 switches"
        print "(each write a recorded change), database on file, QoS 1: recording on, off, and off2 (a second gateway"
        print "without recording: the noise); 5,000/s and the window, on and off in turns (`--only history`); CPU: seconds of"
        print "the gateway per 10,000 writes.\n"
        print "| load | round | recording | p50 | p99 | writes/s | lost | CPU s/10k |"
        print "|---|---|---|---|---|---|---|---|"
        printf "%s\n", hist
        print "| load | p50 on ÷ off | p99 on ÷ off | writes/s on ÷ off | CPU on ÷ off |"
        print "|---|---|---|---|---|"
        printf "%s\n", hist_ratios
        if (htail != "") printf "%s\n\n", htail
        if (history_load != "") printf "Load average at the end of the round trips (1, 5, 15 min): %s.\n\n", history_load
        }
        if (history != "") printf "%s\n", history
    }
    if (timers != "") {
        print "### Timers (issue 49)\n"
        printf "%s\n", timers
    }
    if (count > 0) {
    print "### Scale of the home (QoS 1, database on file)\n"
    print "Start: process start until the last value topic is at the broker (database already built, each on a"
    print "fresh broker: the median, and each start where the run had several; first start: building the home"
    print "into an empty database); devices file: reading the virtual devices YAML file (check-config, median of"
    print "three), part of each start; from the database: the start less that. RSS under load and CPU: " window_size " writes in flight.\n"
    print "| accessories | first start (ms) | start (ms) | starts (ms) | devices file (ms) | from the database (ms) | RSS idle (MB) | RSS under load (MB) | CPU s/10k | writes/s | floor RSS (MB) | floor CPU s/10k | floor writes/s |"
    print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    for (i = 1; i <= count; i++) {
        n = sizes[i]
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %.0f | %s | %.2f | %.0f |\n", n, first[n], start[n], \
            start_rounds[n] == "" ? "–" : start_rounds[n], devices_file[n] == "" ? "–" : devices_file[n], \
            devices_file[n] == "" ? "–" : start[n] - devices_file[n], idle[n, "homegate"], \
            peak[n, "homegate"], cpu[n, "homegate"], tput[n, "homegate"], peak[n, "floor"], cpu[n, "floor"], tput[n, "floor"]
    }
    print ""
    }
    if (actions != "") {
    print "### Action sets: 50 writes, until all 50 states are published (ms)\n"
    print "| database | writes | runs | p50 | max | lost |"
    print "|---|---|---|---|---|---|"
    printf "%s\n", actions
    }
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
    if (sync_ms != "") {
        print "### Slow disk: " sync_ms " ms per sync (LD_PRELOAD bench/out/slowfsync.so), database on file\n"
        print "Every fsync, fdatasync and syncfs of homegate sleeps " sync_ms " ms first, as on a hub'"'"'s SD card; syncs: the"
        print "calls the library counted. zigbee2mqtt as above (" slow_devices " devices), window: `data.valueCommitWindow`; late:"
        print "unanswered when the run was cut (" drain_limit " s after the last update sent), not lost.\n"
        print "| window | offered/s | updates/s | p50 | p90 | p99 | max | lost | late | stale | syncs | syncs/s | CPU s/10k |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        printf "%s\n", slow
        print "A device value on disk: with no other traffic, one update at a time, from its value published to the next"
        print "sync (ms; unsynced: no sync within the limit):\n"
        print "| window | delays (ms) | unsynced | limit (s) |"
        print "|---|---|---|---|"
        printf "%s\n", value_sync
        printf "Layout changes: %s `addRoom` one after another, each sent when the one before was answered: p50 %.1f ms, p90 %.1f ms,\n", \
            slow_layout_n, slow_layout_p50, slow_layout_p90
        printf "min %.1f ms, max %.1f ms; %s syncs in all, %s of the %s with a sync before their answer", \
            slow_layout_min, slow_layout_max, slow_layout_syncs, slow_layout_synced, slow_layout_n
        if (layout_p50 != "") printf " (this machine'"'"'s disk: p50 %.1f ms, max %.1f ms, %s addRoom)", layout_p50, layout_max, layout_n
        printf ". Taking the %s devices into a home (%d layout changes) took %s ms and %s syncs.\n\n", \
            slow_devices, 1 + int((slow_devices + 19) / 20) + slow_devices, slow_setup_ms, slow_setup_syncs
        if (slow_rt != "") {
            print "Command round trip, 1,000 accessories, QoS 1, 1,000/s, on the slow disk:\n"
            print "| p50 | p90 | p99 | max | writes/s | lost | syncs | p50 ÷ floor | p99 ÷ floor |"
            print "|---|---|---|---|---|---|---|---|---|"
            print slow_rt "\n"
        }
    }
    if (idle_s != "" || memory != "" || soak_line != "") {
        print "### Idle and memory: 1,000 accessories\n"
        if (soak_line != "") print soak_line "\n"
        if (idle_s != "") printf "Idle: %s s of CPU over %s s with no traffic, once at rest after its start (%s context switches of its %s threads; RSS %s MB).\n\n", \
            idle_cpu, idle_s, idle_switches, idle_threads, idle_rss
        if (memory != "") {
            print "Resident memory at rest after the window load (MB): VmRSS = RssAnon (the process'"'"'s own) + RssFile (the"
            print "executable and shared libraries, clean pages of the page cache) + RssShmem; from /proc/PID/smaps the"
            print "file-backed pages of the executable and of the libraries, and where the anonymous ones are: anonymous"
            print "mappings (malloc'"'"'s arenas, thread stacks), the brk heap, pages written in file mappings (relocated data).\n"
            print "| build | VmRSS | RssAnon | RssFile | RssShmem | executable | libraries | anon mappings | heap | anon in files |"
            print "|---|---|---|---|---|---|---|---|---|---|"
            printf "%s\n", memory
        }
    }
    if (flap_n > 0) {
        print "### A reachability flap against the size of the home\n"
        printf "bench/flap (`flap-bench`): one accessory of a home of virtual switches goes unreachable and back, %s times,\n", flap_count
        printf "in %s rounds over the sizes, interleaved (the table has the medians),\n", flap_rounds
        print "each waited for until the gateway'"'"'s publisher has taken it in, on a private mosquitto; the accessory'"'"'s topics"
        print "go out at once, its home'"'"'s `$layout` (which shows every accessory'"'"'s reachability) once per second of flapping"
        print "and at the end, counted. CPU is the whole process'"'"'s (model, publisher, libmosquitto'"'"'s thread).\n"
        print "| accessories | CPU per flap (µs) | wall per flap (µs) | one late `$layout` (ms of CPU) |"
        print "|---|---|---|---|"
        for (i = 1; i <= flap_n; i++) {
            n = flap_sizes[i]
            printf "| %s | %.0f | %.0f | %.1f |\n", n, flap_cpu[n], flap_wall[n], flap_layout[n] / 1000
        }
        print ""
    }
    if (hap != "") {
        print "### HomeKit accessories (HAP) against HAP-python on loopback (ms)\n"
        print "Pair setup (SRP-6a 3072-bit/SHA-512, a fresh accessory each time, median of 3) and pair verify (a new"
        print "connection, median of 20) as the driver does them; read and write: `GET`/`PUT /characteristics` on one"
        print "verified session; through homegate: a write command over MQTT (v5, answered) to the accessory and"
        print "back; event: from the accessory'"'"'s change (SIGUSR1 to HAP-python) to the value topic at a subscriber."
        print "HAP-python gathers events for 0.5 s before sending them; the benchmark sets that to 0 (`--event-window 0`)"
        print "to measure homegate'"'"'s path, so a stock HAP-python adds 0.5 s to the event figure.\n"
        print "| pair setup | pair verify | read p50 | read p99 | write p50 | write p99 | MQTT write p50 | MQTT write p99 | event → topic p50 | event → topic p99 |"
        print "|---|---|---|---|---|---|---|---|---|---|"
        printf "%s\n", hap
        print "Pair setup'"'"'s controller share: SRP'"'"'s arithmetic alone (a key pair, the premaster secret, the session"
        print "key and the proofs; median of 20, ms), homegate'"'"'s (OpenSSL'"'"'s libcrypto for the modular powers) beside"
        print "aiohomekit 4.0.1'"'"'s (`bench/hap/aiohomekit-srp.py`) in the same run; the ratio is homegate / aiohomekit.\n"
        print "| homegate | aiohomekit | ratio |"
        print "|---|---|---|"
        printf "%s\n", hap_srp
    }
    if (bridge != "") {
        printf "### homegate'"'"'s HomeKit bridge against HAP-python'"'"'s accessory server, %s accessories (ms)\n\n", bridge_accessories
        print "`hap-bench --bridge` (bench/hap/BridgeBench.swift): `homegate run` serving bench/make-bridge-home.sh'"'"'s home"
        print "(half switches, half lights, outlets, thermostats, locks, doors, blinds, fans and sensors) as a HomeKit"
        print "bridge, and HAP-python 5.2.0 serving the same accessories (scripts/hap-accessory.py --bench-home), both on"
        print "loopback, with the same controller (homegate'"'"'s own HAP client, as the driver uses it), the two servers in"
        print "turn round by round. Pair setup: M1–M6 on an open connection, a server started afresh each time; read by"
        print "the controller that paired; write by a second paired controller, to the answer; event: from that write to"
        print "the `EVENT` at the first controller, subscribed. HAP-python runs without its 0.5 s event window"
        print "(`--event-window 0`); a stock HAP-python adds up to 0.5 s to its event figure. The MQTT row: a write"
        print "command on a private mosquitto to the `EVENT`, through broker, command path, virtual device and bridge.\n"
        print "| | n | homegate p50 | homegate p90 | HAP-python p50 | HAP-python p90 | ratio p50 | ratio p90 |"
        print "|---|---|---|---|---|---|---|---|"
        printf "%s\n", bridge
    }
    for (r = 1; r in bridge_rounds; r++) if ((r in bwith) && (r in bwithout)) { bm_n++; bdiff[bm_n] = bwith[r] - bwithout[r]; banon[bm_n] = bwith_anon[r] - bwithout_anon[r]; bbin[bm_n] = bwith_bin[r] - bwithout_bin[r]; bdiff_list = bdiff_list (bm_n > 1 ? ", " : "") sprintf("%.1f", bwith[r] - bwithout[r]) }
    if (bm_n > 0) {
        print "### Memory of the hub build with the HomeKit bridge\n"
        printf "The hub build at rest after a window of MQTT writes to the home'"'"'s switches, with the bridge of the %s accessories\n", bridge_accessories
        printf "and two paired controllers subscribed to every characteristic that sends events (%s subscriptions, so\n", bsubscribed
        print "each write is an event to both), and without the bridge (no `homekit` section; both with `web: null`), in"
        print "turn (MB). Own: RssAnon; executable: the resident pages of the executable'"'"'s file (its code).\n"
        print "| round | RSS without | RSS with | difference | own without | own with | executable without | executable with |"
        print "|---|---|---|---|---|---|---|---|"
        for (r = 1; (r in bwith) || (r in bwithout); r++)
            printf "| %s | %s | %s | %.1f | %s | %s | %s | %s |\n", r, bwithout[r], bwith[r], bwith[r] - bwithout[r], \
                bwithout_anon[r], bwith_anon[r], bwithout_bin[r], bwith_bin[r]
        print ""
        bridge_mb = median(bdiff, bm_n); bridge_anon_mb = median(banon, bm_n); bridge_bin_mb = median(bbin, bm_n)
    }
    if (hub != "") {
        print "### The hub build (`make hub`): static Swift libraries, code laid out, stripped\n"
        printf "%s\n", hub
    }
    print "### Targets\n"
    print "| target | figure | |"
    print "|---|---|---|"
    if (rt != "") {
    p50list = listed(p50s, pairs); tprlist = listed(tprs, windows)
    p50r = median(p50s, pairs); p99r = median(p99s, pairs)
    printf "| round-trip p50 ≤ 1.5× the floor (QoS 1, 1,000/s; aim 1.1×; median of %d interleaved pairs: %s) | %.2f× | %s |\n", \
        pairs, p50list, p50r, mark(p50r <= 1.5)
    printf "| round-trip p99 ≤ 3× the floor (QoS 1, 1,000/s) | %.2f× | %s |\n", p99r, mark(p99r <= 3)
    tpr = median(tprs, windows)
    printf "| sustained throughput ≥ 0.6× the floor (QoS 1, window; median of %d interleaved pairs: %s) | %.2f× | %s |\n", \
        windows, tprlist, tpr, mark(tpr >= 0.6)
    }
    if ((10000) in start) {
        from_database = start[10000] - devices_file[10000]
        printf "| 10,000 accessories from the database on the broker < 1 s after start (the start%s, %s ms, less reading the virtual devices file, %s ms) | %s ms | %s |\n", \
            start_rounds[10000] == "" ? "" : "; median of " split(start_rounds[10000], _starts, " ") " starts: " start_rounds[10000], \
            start[10000], devices_file[10000] == "" ? "not measured" : devices_file[10000], from_database, mark(from_database < 1000)
    }
    if ((10000) in first) printf "| 10,000 accessories, first start (database built meanwhile) < 3 s | %s ms | %s |\n", first[10000], mark(first[10000] + 0 < 3000)
    if ((1000, "homegate") in peak)
        printf "| under 30 MB RSS with 1,000 accessories (under load: the peak during the window) | release %s MB%s | %s |\n", peak[1000, "homegate"], \
            hub_peak != "" ? ", hub build " hub_peak " MB" : "", mark(peak[1000, "homegate"] + 0 < 30 || (hub_peak != "" && hub_peak + 0 < 30))
    printf "| zero commands lost in every run | %d lost (runs with a loss: %d) | %s |\n", lost_total, lost_runs, mark(lost_total == 0)
    if (z2m_runs > 0) {
        printf "| zigbee2mqtt: %s devices at %s updates/s, each update on its retained topic | %d of %d runs below 98 %% of the rate | %s |\n", \
            z2m_devices, z2m_rate, z2m_slow, z2m_nominal, mark(z2m_slow == 0)
        printf "| zigbee2mqtt: zero updates lost in every run | %d lost, %d devices stale | %s |\n", \
            z2m_lost, z2m_stale, mark(z2m_lost == 0 && z2m_stale == 0)
    }
    if (sync_ms != "") {
        printf "| slow disk (%s ms/sync): ≥ %s zigbee2mqtt updates/s, nothing lost (window %s s) | %.0f/s, %d lost or stale | %s |\n", \
            sync_ms, slow_rate, value_window, slow_tput, slow_lost, mark(slow_tput >= 0.98 * slow_rate && slow_lost == 0)
        printf "| slow disk: group commit buys (updates/s with the window ÷ without) | %.0f/s ÷ %.0f/s = %s | |\n", \
            slow_tput, slow_tput0, ratio(slow_tput, slow_tput0)
        if (value_unsynced > 0) value_figure = value_unsynced " of " value_samples " updates not within " value_limit " s"
        else value_figure = "at most " value_sync_max " ms"
        printf "| slow disk: a device value on disk within a few hundred ms (≤ 300 ms) | %s | %s |\n", \
            value_figure, mark(value_unsynced == 0 && value_sync_max <= 300)
        printf "| slow disk: every layout change on disk before its answer | %s of %s synced first, p50 %.1f ms | %s |\n", \
            slow_layout_synced, slow_layout_n, slow_layout_p50, mark(slow_layout_synced == slow_layout_n && slow_layout_min >= sync_ms)
    }
    if (flap_n > 1) {
        small = flap_sizes[1]; large = flap_sizes[flap_n]
        printf "| a reachability flap costs work for that accessory only (CPU per flap, %s ÷ %s accessories; medians of %s rounds: %s µs and %s µs) | %.0f µs ÷ %.0f µs = %s | %s |\n", \
            large, small, flap_rounds, flap_cpu_rounds[large], flap_cpu_rounds[small], flap_cpu[large], flap_cpu[small], ratio(flap_cpu[large], flap_cpu[small]), \
            mark(flap_cpu[large] <= 3 * flap_cpu[small])
    }
    if (idle_s != "")
        printf "| idle: under 0.1 s of CPU over 60 s (1,000 accessories, no traffic) | %s s over %s s | %s |\n", \
            idle_cpu, idle_s, mark(idle_cpu * 60 / idle_s < 0.1)
    if (release_rss != "")
        printf "| RSS ≤ 30 MB at rest (3 s of quiet) after the load (1,000 accessories) | release %s MB (own %s MB)%s | %s |\n", \
            release_rss, release_anon, hub_rss != "" ? ", hub build " hub_rss " MB (" hub_quiet " MB at its first quiet second)" : "", mark(release_rss <= 30 || (hub_rss != "" && hub_rss <= 30))
    if (soak_line != "")
        printf "| RSS flat over a %.0f-minute soak (1,000 writes/s), and ≤ 30 MB in the hub build | %s build: first sample %s MB, last %s MB (min %s, max %s) | %s |\n", \
            soak_s / 60, soak_build, soak_first, soak_last, soak_min, soak_max, \
            mark(soak_last - soak_first <= 1 && (soak_build != "hub" || soak_max <= 30))
    if (bridge != "")
        printf "| the HomeKit bridge no slower than HAP-python (p50, homegate ÷ HAP-python: %s) | %d of 5 slower | %s |\n", \
            bridge_ratios, bridge_slower, mark(bridge_slower == 0)
    if (bm_n > 0)
        printf "| the bridge (%s accessories, 2 controllers subscribed) costs ≤ 3 MB RSS in the hub build (median of %d rounds: %s) | %.1f MB (own %.1f, executable'"'"'s pages %.1f) | %s |\n", \
            bridge_accessories, bm_n, bdiff_list, bridge_mb, bridge_anon_mb, bridge_bin_mb, mark(bridge_mb <= 3)
    # Met when the whole 95 % interval is within 5 %, missed when all of it is above; else not settled.
    if (htail_p50 != "")
        printf "| recording costs the round trip ≤ 5 %% at p50 (QoS 1, 1,000/s%s, on ÷ off paired over %s sets) | %s×%s | %s |\n", \
            htail_apart, htail_sets, htail_p50, interval(htail_p50_low, htail_p50_high), settled(htail_p50_low, htail_p50_high)
    if (htail_on != "")
        printf "| recording costs the round trip ≤ 5 %% at p99 (QoS 1, 1,000/s%s, on ÷ off paired over %s sets; off2 ÷ off, the noise: %s×%s) | %s×%s | %s |\n", \
            htail_apart, htail_sets, htail_noise, interval(htail_noise_low, htail_noise_high), htail_on, interval(htail_low, htail_high), \
            settled(htail_low, htail_high)
    if (hwindows > 0) {
        hmt = median(htprs, hwindows)
        printf "| recording costs the throughput ≤ 5 %% (window of %s, on ÷ off, median of %d) | %.2f× | %s |\n", window_size, hwindows, hmt, mark(hmt >= 0.95)
    }
    if (history_week_p50 != "")
        printf "| a week of one characteristic answers in < 50 ms (p50; %s build, %s characteristics × %s days) | p50 %s ms, p99 %s ms | %s |\n", \
            history_build, history_series, history_days, history_week_p50, history_week_p99, mark(history_week_p50 < 50)
    if (history_file != "")
        printf "| a month of history stays under the bound | %s MB of %s MB | %s |\n", history_file, history_bound, mark(history_file < history_bound)
    if (timers_with != "") {
        printf "| %s timers at rest cost no measurable CPU (over %s s; without them %s s) | %s s | %s |\n", \
            timers_n, timers_seconds, timers_without, timers_with, mark(timers_with - timers_without <= 0.05)
        printf "| %s timers due in one minute fire within 100 ms of it (the last) | max %s ms, %s of %s fired | %s |\n", \
            timers_burst, timers_max, timers_fired, timers_burst, mark(timers_fired == timers_burst && timers_max != "" && timers_max <= 100)
    }
    if (hub_mb != "")
        printf "| the hub build documented for the Pi | %s MB stripped, %s | %s |\n", hub_mb, hub_runs == "true" ? "runs" : "does not run", \
            hub_runs == "true" ? "met" : "**missed**"
}' "$results")

printf '\n%s\n\nmachine: %s\n%s, commit %s%s, %s s\n' "$tables" "$machine" "$date" "$commit" "$dirty" "$duration"

if [[ $quick == true || -n $partial ]]; then
    echo "(--quick or --only: docs/benchmarks.md left as it is)"
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
