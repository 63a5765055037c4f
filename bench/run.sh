#!/usr/bin/env bash
# The benchmark behind `make bench`: homegate against the floor (bench/floor.c, the fastest gateway
# libmosquitto allows) on the same private mosquitto, in the same run, interleaved point by point.
# Prints a table, writes bench/out/results.json and the figures of docs/benchmarks.md.
#
# usage: bench/run.sh [--quick] [--only SCENARIO[,SCENARIO...]]
#   --quick  shorter runs, for trying the script itself
#   --only   runs only these of roundtrip, serving, scale, zigbee2mqtt, slowdisk, hap, bridge, hub, flap, soak,
#            history, timers
#            (docs/benchmarks.md is then left alone, as with --quick)
# Expects the release build of homegate, bench/out/{floor,loadgen,z2mfloor,z2mload,slowfsync.so},
# mosquitto_pub, mosquitto_sub and sqlite3 (for timers) and
# for the hub section the hub build in .build-hub (the Makefile builds them all).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=$root/bench/out
homegate=${HOMEGATE:-$root/.build/release/homegate}
floor=$out/floor
loadgen=$out/loadgen
z2mfloor=$out/z2mfloor
z2mload=$out/z2mload
slowfsync=$out/slowfsync.so
hub_homegate=${HOMEGATE_HUB:-$root/.build-hub/release/homegate}
quick=false only=""
while (($#)); do
    case $1 in
    --quick) quick=true ;;
    --only) only=,${2:?--only needs a list of scenarios},; shift ;;
    *) echo "usage: bench/run.sh [--quick] [--only SCENARIO[,SCENARIO...]]" >&2; exit 2 ;;
    esac
    shift
done
wanted() { [[ -z $only || $only == *",$1,"* ]]; }

# Run lengths: each fixed-rate point lasts about 5 s, the window runs send 10,000 writes; the
# zigbee2mqtt points (z2m_rate for z2m_seconds, then z2m_capacity_rate, above what homegate sustains,
# for z2m_capacity_seconds) are repeated z2m_rounds times per gateway.
# The slow disk: slow_rate updates/s for slow_seconds with the default commit window, then for
# slow_nowindow_seconds with none (its drain cut after slow_drain_limit: without a window a disk this
# slow may leave a backlog of minutes); layout_count addRoom one after another; idle_seconds without
# traffic.
if $quick; then
    rate_seconds=2 window_count=3000 scales=(100 1000) actionset_runs=5
    z2m_seconds=3 z2m_capacity_seconds=2 z2m_rounds=1
    slow_seconds=3 slow_nowindow_seconds=1 slow_drain_limit=10 layout_count=20 idle_seconds=15 hap_rounds=100
    bridge_rounds=100 bridge_setups=3 bridge_verifies=20
    soak_length=60 flap_count=300 history_days=12 history_sets=6 history_block=0.5
else
    rate_seconds=5 window_count=10000 scales=(100 1000 10000) actionset_runs=20
    z2m_seconds=10 z2m_capacity_seconds=4 z2m_rounds=3
    slow_seconds=10 slow_nowindow_seconds=2 slow_drain_limit=20 layout_count=100 idle_seconds=60 hap_rounds=500
    bridge_rounds=500 bridge_setups=10 bridge_verifies=100
    soak_length=600 flap_count=1000 history_days=30 history_sets=100 history_block=1.5
fi
# BENCH_EXTRA_CONFIG: YAML appended to every homegate config the bench writes (an A/B of a setting, e.g.
# "history: {enabled: false}"; an older build given by HOMEGATE must know the keys).
# BENCH_HISTORY_SETS: more paired sets for the history round trip, to narrow its interval (each set is
# three blocks of history_block seconds).
history_sets=${BENCH_HISTORY_SETS:-$history_sets}
# BENCH_HISTORY_AB: another build (a path) for the history round trip's third gateway, recording too:
# then off2 ÷ off is that build's cost of recording and on ÷ off2 this build's against it, in one run.
history_ab=${BENCH_HISTORY_AB:-}
# BENCH_HISTORY_GAP: seconds with no writes after each block of the history round trip (default 0:
# back to back). With a gap, a gateway's work after its block (the recorder's batch, written once
# the changes pause) falls in the gap rather than in the next gateway's block: the cost of recording
# to a hub whose commands come in bursts, without the carry-over onto the gateways beside it.
history_gap=$(printf %g "${BENCH_HISTORY_GAP:-0}")
slow_ms=${BENCH_SYNC_MS:-10} slow_rate=5000 slow_window=0.1
z2m_devices=500 z2m_rate=2000 z2m_capacity_rate=5000
window=100
pairs=3
round_trip_accessories=1000
room_size=20
clock_ticks=$(getconf CLK_TCK)
mosquitto=$(command -v mosquitto || echo /usr/sbin/mosquitto)

work=$(mktemp -d "${TMPDIR:-/tmp}/homegate-bench.XXXXXX")
results=$out/results.jsonl
mkdir -p "$out"
: >"$results"
pids=()

cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    # BENCH_KEEP=1 keeps the processes' configs, databases and logs, to look into a failed run.
    if [[ ${BENCH_KEEP:-} == 1 ]]; then log "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

log() { printf '%s bench: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---- processes --------------------------------------------------------------------------------

source "$root/scripts/loopback.sh"

# start_broker NAME: a private mosquitto on a free loopback port, configured like Config/mosquitto.conf
# (set_tcp_nodelay true), without persistence and without a cap on queued QoS 1 messages, so the
# broker neither touches the disk nor drops what a slow subscriber has not taken yet.
# Sets broker_port and broker_pid.
start_broker() {
    local dir=$work/$1
    mkdir -p "$dir"
    broker_port=$(free_port)
    cat >"$dir/mosquitto.conf" <<CONF
per_listener_settings false
set_tcp_nodelay true
allow_anonymous true
max_queued_messages 1000000
log_dest stderr
log_type error
log_type warning
listener $broker_port 127.0.0.1
CONF
    "$mosquitto" -c "$dir/mosquitto.conf" 2>"$dir/mosquitto.log" &
    broker_pid=$!
    pids+=("$broker_pid")
    wait_for_port "$broker_port" && return
    log "mosquitto did not start: $(cat "$dir/mosquitto.log")"
    exit 1
}

stop() {
    local pid=$1
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

# start_floor QOS: the floor relay under base topic "floor"; sets floor_pid once it has subscribed.
start_floor() {
    local fifo=$work/floor.$RANDOM
    mkfifo "$fifo"
    "$floor" 127.0.0.1 "$broker_port" floor "$1" >"$fifo" &
    floor_pid=$!
    pids+=("$floor_pid")
    read -r -t 10 _ <"$fifo" || { log "the floor did not subscribe"; exit 1; }
    rm -f "$fifo"
}

# write_config DIR ACCESSORIES IN_MEMORY [WINDOW] [HOME]: homegate's config for the benchmark home (or
# the virtual home file HOME), values group-committed within WINDOW seconds (data.valueCommitWindow,
# 0.1 as by default unless given).
write_config() {
    local dir=$1 home=${5:-$work/home-$2.yml}
    mkdir -p "$dir/data"
    [[ -f $home ]] || bench/make-home.sh "$2" "$room_size" >"$home"
    cat >"$dir/homegate.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:$broker_port
  clientId: homegate-bench
  baseTopic: homegate
data:
  directory: $dir/data
  inMemory: $3
  valueCommitWindow: ${4:-0.1}
accessories:
  virtual: $home
commands:
  timeout: 10
  # The benchmark measures what the gateway can do; the per-account limit (50/s) would measure itself
  rateLimit: null
logging:
  level: warning
# Like for like with the earlier figures; the page costs nothing until a browser opens it.
web: null
${BENCH_EXTRA_CONFIG:-}
CONF
}

# homegate runs with these variables in its environment (the slow disk sets LD_PRELOAD).
homegate_env=()

# slow_disk_env COUNTS: homegate_env for the slow disk: every fsync, fdatasync and syncfs sleeps
# slow_ms first (bench/slowfsync.c), the calls counted in the file COUNTS.
slow_disk_env() { homegate_env=(LD_PRELOAD="$slowfsync" SLOWFSYNC_MS="$slow_ms" SLOWFSYNC_COUNTS="$1"); }

# syncs COUNTS: how many syncs the slow-disk library counted in COUNTS so far (0 without the file).
syncs() { [[ -s $1 ]] && od -A n -t u8 -N 24 "$1" | awk '{ for (i = 1; i <= NF; i++) n += $i } END { print n + 0 }' || echo 0; }

# start_homegate DIR ACCESSORIES: starts homegate and waits until every value topic of the home is
# at the broker. Sets homegate_pid and startup_ms (process start to the last value topic).
start_homegate() {
    local dir=$1 accessories=$2 fifo=$work/startup.$RANDOM result started
    mkfifo "$fifo"
    "$loadgen" -p "$broker_port" -m startup -n "$accessories" -t 25 >"$fifo" &
    local watcher=$!
    exec 4<"$fifo"
    read -r -t 10 _ <&4
    started=$(date +%s%N)
    env "${homegate_env[@]}" "$homegate" run --config "$dir/homegate.yml" 2>>"$dir/homegate.log" &
    homegate_pid=$!
    pids+=("$homegate_pid")
    read -r -t 600 result <&4 || { log "homegate did not publish the home"; exit 1; }
    exec 4<&-
    wait "$watcher" || true
    rm -f "$fifo"
    local topics done_ns
    topics=$(field "$result" topics)
    done_ns=$(field "$result" done_ns)
    if [[ $topics != "$accessories" ]]; then
        log "homegate published $topics of $accessories value topics; its log: $(tail -5 "$dir/homegate.log")"
        exit 1
    fi
    startup_ms=$(((done_ns - started) / 1000000))
}

# ---- measurements -----------------------------------------------------------------------------

field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^,}\"]*\).*/\1/p" <<<"$1"; }

cpu_seconds() { awk -v hz="$clock_ticks" '{ sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz }' "/proc/$1/stat"; }

# thread_ticks PID: each thread name's CPU ticks (user and system) over the threads alive now, one
# "name<TAB>ticks" a line; threads that share a name (the cooperative pool's) are summed.
thread_ticks() {
    local task
    for task in /proc/"$1"/task/*; do
        printf '%s\t%s\n' "$(tr ' ' '_' <"$task/comm")" "$(sed 's/^.*) //' "$task/stat" | awk '{ print $12 + $13 }')"
    done 2>/dev/null | awk -F'\t' '$1 != "" { s[$1] += $2 } END { for (n in s) print n "\t" s[n] }'
}

# thread_seconds BEFORE AFTER PROCESS_SECONDS: "name seconds, ..." of what each thread name spent
# between two thread_ticks, the busiest first; threads started meanwhile count from zero, and what
# threads that ended meanwhile spent (libdispatch's idle workers exit) is "ended", the process's
# PROCESS_SECONDS less the rest.
thread_seconds() {
    awk -F'\t' -v hz="$clock_ticks" -v total="$3" 'NR == FNR { before[$1] = $2; next }
        { d = ($2 - before[$1]) / hz; live += d; if (d >= 0.01) printf "%.2f\t%s\n", d, $1 }
        END { if (total - live >= 0.01) printf "%.2f\tended\n", total - live }' <(echo "$1") <(echo "$2") |
        sort -rn | awk -F'\t' '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $2, $1 }'
}

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# measure PID LABELS LOADGEN-ARGS...: runs the load generator against the process PID while sampling
# its RSS, and records the generator's figures with the process's CPU time, context switches (of
# the threads alive at the end: how often its threads were woken), peak RSS, and the broker's CPU
# time meanwhile (what serving this gateway cost the broker: on 2 cores, a share of the same CPU).
measure() { measure_with "$loadgen" "$@"; }

# measure_with GENERATOR PID LABELS ARGS...: the same with another generator (bench/out/z2mload).
# With sync_counts set (the slow disk's counts file), the record also has the syncs the run caused.
sync_counts=""
measure_with() {
    local generator_binary=$1 pid=$2 labels=$3
    shift 3
    local cpu_before cpu_after peak=0 rss result syncs_before switches_before broker_before
    cpu_before=$(cpu_seconds "$pid")
    broker_before=$(cpu_seconds "$broker_pid")
    switches_before=$(context_switches "$pid")
    syncs_before=$(syncs "$sync_counts")
    "$generator_binary" -p "$broker_port" -r "$room_size" "$@" >"$work/loadgen.out" &
    local generator=$!
    while kill -0 "$generator" 2>/dev/null; do
        rss=$(rss_mb "$pid")
        peak=$(awk -v a="$peak" -v b="$rss" 'BEGIN { print (b > a ? b : a) }')
        sleep 0.2
    done
    wait "$generator"
    cpu_after=$(cpu_seconds "$pid")
    local broker_cpu
    broker_cpu=$(awk -v a="$broker_before" -v b="$(cpu_seconds "$broker_pid")" 'BEGIN { printf "%.2f", b - a }')
    local switches=$(switches_since "$pid" "$switches_before")
    result=$(cat "$work/loadgen.out")
    local cpu
    cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.2f", b - a }')
    local synced=""
    [[ -z $sync_counts ]] || synced=,\"syncs\":$(($(syncs "$sync_counts") - syncs_before))
    printf '{%s,%s,"cpu_s":%s,"broker_cpu_s":%s,"context_switches":%s,"rss_load_mb":%s%s}\n' "$labels" \
        "${result:1:${#result}-2}" "$cpu" "$broker_cpu" "$switches" "$peak" "$synced" >>"$results"
    log "$labels $(tail -1 "$results" | sed 's/.*"mode"/"mode"/')"
}

record() { printf '{%s}\n' "$1" >>"$results"; log "$1"; }

# wait_idle PID: waits until the process used less than 5 % of a core for a whole second (at most
# 10 minutes): a gateway still publishing what it was just asked to do is not yet ready for a point.
wait_idle() {
    local before after
    if [[ ! -e /proc/$1/stat ]]; then
        # The last log a process wrote is the likeliest to say why it is gone.
        log "process $1 has exited; the newest log: $(ls -t "$work"/*/homegate.log 2>/dev/null | head -1 | xargs -r tail -5)"
        exit 1
    fi
    for _ in $(seq 600); do
        before=$(cpu_seconds "$1")
        sleep 1
        after=$(cpu_seconds "$1")
        awk -v a="$before" -v b="$after" 'BEGIN { exit !(b - a < 0.05) }' && return
    done
    log "process $1 did not come to rest"
    exit 1
}

# round_trip_loads QOS: the points measured, each for the floor and then homegate. With QoS 1 the
# 1,000/s point and the window are measured `pairs` times each, interleaved: the p50 and
# throughput targets are the medians of the pairs' ratios, as the floor itself moves by a fifth
# between points on a shared host (its window throughput by up to a quarter within one run).
round_trip_loads() {
    if (($1 == 1)); then
        for ((pair = 0; pair < pairs; pair++)); do echo 1000; done
        echo 5000
        for ((pair = 0; pair < pairs; pair++)); do echo window; done
    else
        echo 1000 5000 window
    fi
}

# round_trip_point GATEWAY PID BASE QOS DB LOAD [SCENARIO]: one point (a fixed rate or the window)
# for one gateway, recorded under SCENARIO (roundtrip unless given).
round_trip_point() {
    local gateway=$1 pid=$2 base=$3 qos=$4 db=$5 load=$6 scenario=${7:-roundtrip}
    local labels="\"scenario\":\"$scenario\",\"gateway\":\"$gateway\",\"db\":\"$db\",\"load\":\"$load\""
    local common=(-b "$base" -n "$round_trip_accessories" -q "$qos")
    case $load in
    window) measure "$pid" "$labels" "${common[@]}" -m window -w "$window" -c "$window_count" ;;
    *) measure "$pid" "$labels" "${common[@]}" -m rate -R "$load" -c $((load * rate_seconds)) ;;
    esac
}

# idle_cpu PID ACCESSORIES: once the process is at rest after its start, the CPU time it takes over
# idle_seconds without any traffic, and its RSS before and after.
idle_cpu() {
    local pid=$1 before after rss_before switches_before
    wait_idle "$pid"
    rss_before=$(rss_mb "$pid")
    switches_before=$(context_switches "$pid")
    before=$(cpu_seconds "$pid")
    sleep "$idle_seconds"
    after=$(cpu_seconds "$pid")
    record "\"scenario\":\"idle\",\"gateway\":\"homegate\",\"accessories\":$2,\"seconds\":$idle_seconds,\"cpu_s\":$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", b - a }'),\"context_switches\":$(switches_since "$pid" "$switches_before"),\"threads\":$(ls "/proc/$pid/task" | wc -l),\"rss_before_mb\":$rss_before,\"rss_after_mb\":$(rss_mb "$pid")"
}

# context_switches PID: "TID COUNT" for each of the process's threads now: its context switches so
# far (about how often it was woken).
context_switches() {
    local task
    for task in /proc/"$1"/task/*; do
        awk -v tid="${task##*/}" '/^(voluntary|nonvoluntary)_ctxt_switches/ { n += $2 } END { print tid, n + 0 }' \
            "$task/status" 2>/dev/null
    done
}

# switches_since PID BEFORE: context switches since BEFORE (context_switches's output) of the threads
# alive now. A thread that ended meanwhile takes its count with it (the sum of the threads' counts went
# below zero when a thread ended between the samples), so this is a lower bound.
switches_since() {
    awk 'NR == FNR { before[$1] = $2; next } { n += $2 - ($1 in before ? before[$1] : 0) } END { print n + 0 }' \
        <(printf '%s\n' "$2") <(context_switches "$1")
}

# memory_split PID LABELS [SCENARIO]: once the process is at rest after a load, its resident memory: VmRSS,
# RssAnon (the process's own), RssFile (the binary and the shared libraries), RssShmem, and from
# /proc/PID/smaps how the file-backed part divides into the executable and the libraries and where the
# anonymous part is: the brk heap, anonymous mappings (malloc's arenas, thread stacks, the runtimes'
# allocations) and pages written in file mappings (the libraries' relocated data).
# At rest means settled: three whole seconds of quiet. The gateway gives malloc's free pages back once
# its loop has had a second of quiet after its last work, and history's last batch is written a second
# after the last change: read at the first quiet second, the figures held 1-2 MB the gateway was about
# to give back. That first reading is kept beside them (rss_quiet_mb).
memory_split() {
    local pid=$1 labels=$2 scenario=${3:-memory} status split quiet
    wait_idle "$pid"
    quiet=$(rss_mb "$pid")
    wait_idle "$pid"
    wait_idle "$pid"
    status=,\"rss_quiet_mb\":$quiet$(awk '/^(VmRSS|RssAnon|RssFile|RssShmem):/ { printf ",\"%s_mb\":%.1f", $1 == "VmRSS:" ? "rss" : tolower(substr($1, 4, length($1) - 4)), $2 / 1024 }' "/proc/$pid/status")
    split=$(awk -v exe="$(readlink "/proc/$pid/exe")" '
        /^[0-9a-f]+-[0-9a-f]+ / { path = ""; for (i = 6; i <= NF; i++) path = path (i > 6 ? " " : "") $i; next }
        /^Rss:/ { rss = $2; next }
        /^Anonymous:/ {
            if (path == exe) { binary += rss - $2; anon_files += $2 }
            else if (path ~ /^\//) { libraries += rss - $2; anon_files += $2 }
            else if (path == "[heap]") heap += $2
            else other += $2
        }
        END { printf ",\"file_binary_mb\":%.1f,\"file_libraries_mb\":%.1f,\"anon_heap_mb\":%.1f,\"anon_mappings_mb\":%.1f,\"anon_in_files_mb\":%.1f", \
            binary / 1024, libraries / 1024, heap / 1024, other / 1024, anon_files / 1024 }' "/proc/$pid/smaps")
    record "\"scenario\":\"$scenario\",$labels$status$split"
}

# ---- scenarios --------------------------------------------------------------------------------

# 1 and 3: round trips at 1,000 accessories, homegate (database on file, then in memory) and the
# floor, alternating point by point on one broker.
round_trip_scenario() {
    log "round trips: $round_trip_accessories accessories"
    start_broker roundtrip
    local file_dir=$work/roundtrip-file memory_dir=$work/roundtrip-memory
    write_config "$file_dir" "$round_trip_accessories" false
    start_homegate "$file_dir" "$round_trip_accessories"
    local file_pid=$homegate_pid
    for qos in 1 0; do
        start_floor "$qos"
        for load in $(round_trip_loads "$qos"); do
            round_trip_point floor "$floor_pid" floor "$qos" none "$load"
            round_trip_point homegate "$file_pid" homegate "$qos" file "$load"
        done
        stop "$floor_pid"
    done
    # Layout changes on this machine's disk, for the slow disk's (scenario 6) to compare with.
    measure "$file_pid" "\"scenario\":\"layout\",\"gateway\":\"homegate\",\"db\":\"file\"" -b homegate -m layout -c "$layout_count"
    stop "$file_pid"

    # The same home with the database in memory, against the floor again (QoS 1).
    write_config "$memory_dir" "$round_trip_accessories" true
    start_homegate "$memory_dir" "$round_trip_accessories"
    start_floor 1
    for load in $(round_trip_loads 1); do
        round_trip_point floor "$floor_pid" floor 1 none "$load"
        round_trip_point homegate "$homegate_pid" homegate 1 memory "$load"
    done

    # 4: action sets of 50 writes, database on file and in memory (homegate only: the floor has none).
    local labels="\"scenario\":\"actionset\",\"gateway\":\"homegate\",\"db\":\"memory\""
    measure "$homegate_pid" "$labels" -n "$round_trip_accessories" -m actionset -c "$actionset_runs" -q 1
    stop "$homegate_pid"
    stop "$floor_pid"
    start_homegate "$file_dir" "$round_trip_accessories"
    labels="\"scenario\":\"actionset\",\"gateway\":\"homegate\",\"db\":\"file\""
    measure "$homegate_pid" "$labels" -n "$round_trip_accessories" -m actionset -c "$actionset_runs" -q 1
    stop "$homegate_pid"
    stop "$broker_pid"
}

# Where libmosquitto is served: the gateway's event loop (its external-loop calls, as homegate runs)
# against libmosquitto's own loop on the client's thread (HOMEGATE_MQTT_SERVING=thread), QoS 1 at
# 1,000/s and the window, `pairs` times each, alternating, database in memory.
serving_scenario() {
    log "serving: the gateway's loop against libmosquitto's own thread"
    start_broker serving
    local loop_dir=$work/serving-loop thread_dir=$work/serving-thread
    write_config "$loop_dir" "$round_trip_accessories" true
    write_config "$thread_dir" "$round_trip_accessories" true
    sed -i 's/baseTopic: homegate/baseTopic: thread/; s/clientId: homegate-bench/clientId: homegate-thread/' \
        "$thread_dir/homegate.yml"
    start_homegate "$loop_dir" "$round_trip_accessories"
    local loop_pid=$homegate_pid
    homegate_env=(HOMEGATE_MQTT_SERVING=thread)
    # start_homegate waits for the homegate/ topics; the thread's are under thread/.
    env "${homegate_env[@]}" "$homegate" run --config "$thread_dir/homegate.yml" 2>>"$thread_dir/homegate.log" &
    local thread_pid=$!
    pids+=("$thread_pid")
    homegate_env=()
    wait_idle "$loop_pid"
    wait_idle "$thread_pid"
    for load in $(round_trip_loads 1); do
        round_trip_point loop "$loop_pid" homegate 1 memory "$load" serving
        round_trip_point thread "$thread_pid" thread 1 memory "$load" serving
    done
    stop "$loop_pid"
    stop "$thread_pid"
    stop "$broker_pid"
}

# 2: homes of growing size. The first start builds the home into an empty database (seed); then
# `pairs` starts with the database built, each on a fresh broker as after a reboot of the hub: the
# median is the start (one start swings by a tenth or more from run to run on a shared host). The
# last of them stays for the load.
scale_scenario() {
    local accessories=$1 dir=$work/scale-$1
    log "scale: $accessories accessories"
    start_broker "scale-$accessories-seed"
    write_config "$dir" "$accessories" false
    start_homegate "$dir" "$accessories"
    local seed_ms=$startup_ms
    stop "$homegate_pid"
    stop "$broker_pid"

    local round starts=()
    for ((round = 1; round <= pairs; round++)); do
        if ((round > 1)); then
            stop "$homegate_pid"
            stop "$broker_pid"
        fi
        start_broker "scale-$accessories-$round"
        write_config "$dir" "$accessories" false
        start_homegate "$dir" "$accessories"
        starts+=("$startup_ms")
    done
    local median
    median=$(printf '%s\n' "${starts[@]}" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    # The start includes reading the virtual devices' YAML file (Yams), which a home of real devices
    # does not have: `check-config` reads that file and nothing else that takes time, so the start
    # of the home from its database is the start less check-config's (median of three).
    local reads=() began
    for ((round = 1; round <= 3; round++)); do
        began=$(date +%s%N)
        "$homegate" check-config --config "$dir/homegate.yml" >/dev/null 2>&1
        reads+=($((($(date +%s%N) - began) / 1000000)))
    done
    local read_ms
    read_ms=$(printf '%s\n' "${reads[@]}" | sort -n | sed -n 2p)
    sleep 2
    local idle
    idle=$(rss_mb "$homegate_pid")
    record "\"scenario\":\"scale\",\"gateway\":\"homegate\",\"accessories\":$accessories,\"first_start_ms\":$seed_ms,\"startup_ms\":$median,\"startup_rounds_ms\":\"${starts[*]}\",\"devices_file_ms\":$read_ms,\"rss_idle_mb\":$idle"
    if ((accessories == round_trip_accessories)); then idle_cpu "$homegate_pid" "$accessories"; fi
    local labels="\"scenario\":\"scale-load\",\"gateway\":\"homegate\",\"accessories\":$accessories"
    measure "$homegate_pid" "$labels" -b homegate -n "$accessories" -q 1 -m window -w "$window" -c "$window_count"
    if ((accessories == round_trip_accessories)); then
        memory_split "$homegate_pid" "\"gateway\":\"homegate\",\"build\":\"release\",\"accessories\":$accessories"
    fi
    stop "$homegate_pid"

    start_floor 1
    idle=$(rss_mb "$floor_pid")
    record "\"scenario\":\"scale\",\"gateway\":\"floor\",\"accessories\":$accessories,\"rss_idle_mb\":$idle"
    labels="\"scenario\":\"scale-load\",\"gateway\":\"floor\",\"accessories\":$accessories"
    measure "$floor_pid" "$labels" -b floor -n "$accessories" -q 1 -m window -w "$window" -c "$window_count"
    stop "$floor_pid"
    stop "$broker_pid"
}

# 5: state updates from zigbee2mqtt. z2mload plays zigbee2mqtt with z2m_devices weather sensors;
# homegate (accessories.zigbee2mqtt, database on file) has them in a home and publishes each new
# temperature on its retained value topic; the floor (bench/z2mfloor.c) republishes each state payload
# retained. Both run on one broker for the whole scenario, the points alternate. The floor's
# zigbee2mqtt plays under its own base topic (z2m-floor), so homegate is idle during the floor's
# points and the floor during homegate's, as the round trips do with the base topics of the writes.
write_z2m_config() {
    local dir=$1 window=${2:-0.1}
    mkdir -p "$dir/data"
    cat >"$dir/homegate.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:$broker_port
  clientId: homegate-bench
  baseTopic: homegate
data:
  directory: $dir/data
  inMemory: false
  valueCommitWindow: $window
accessories:
  zigbee2mqtt:
    baseTopic: zigbee2mqtt
commands:
  timeout: 10
  rateLimit: null
logging:
  level: warning
# Like for like with the earlier figures; the page costs nothing until a browser opens it.
web: null
${BENCH_EXTRA_CONFIG:-}
CONF
}

zigbee2mqtt_scenario() {
    log "zigbee2mqtt: $z2m_devices devices, $z2m_rate and $z2m_capacity_rate updates/s"
    start_broker zigbee2mqtt
    local dir=$work/zigbee2mqtt result started setup_ms
    write_z2m_config "$dir"
    local z2m=(-z zigbee2mqtt -b homegate -H Zigbee -k homegate -n "$z2m_devices")
    local floor_z2m=(-z z2m-floor -b floor -k floor -n "$z2m_devices")

    # homegate from an empty database: it reads bridge/devices, then the devices go into a home
    # through its requests (the time is from the process start until the last addAccessory is answered).
    started=$(date +%s%N)
    "$homegate" run --config "$dir/homegate.yml" 2>>"$dir/homegate.log" &
    homegate_pid=$!
    pids+=("$homegate_pid")
    result=$("$z2mload" -p "$broker_port" -r "$room_size" "${z2m[@]}" -m setup -A) || {
        log "homegate did not take the zigbee2mqtt devices into a home; its log: $(tail -5 "$dir/homegate.log")"
        exit 1
    }
    setup_ms=$((($(date +%s%N) - started) / 1000000))
    # The answers come before homegate has published the home it built: it is ready when it rests.
    wait_idle "$homegate_pid"
    local idle_ms=$((($(date +%s%N) - started) / 1000000 - 1000))
    "$z2mload" -p "$broker_port" "${floor_z2m[@]}" -m setup >/dev/null
    local fifo=$work/z2mfloor.fifo
    mkfifo "$fifo"
    "$z2mfloor" 127.0.0.1 "$broker_port" z2m-floor floor 1 >"$fifo" &
    floor_pid=$!
    pids+=("$floor_pid")
    read -r -t 10 _ <"$fifo" || { log "the zigbee2mqtt floor did not subscribe"; exit 1; }
    rm -f "$fifo"
    record "\"scenario\":\"zigbee2mqtt-setup\",\"gateway\":\"homegate\",\"devices\":$z2m_devices,\"bridge_devices_bytes\":$(field "$result" bridge_devices_bytes),\"setup_ms\":$setup_ms,\"idle_ms\":$idle_ms,\"rss_idle_mb\":$(rss_mb "$homegate_pid")"

    # Warm-up, not recorded: one update per device, so every value topic exists before the points.
    local warm=(-m rate -R "$z2m_rate" -c "$z2m_devices")
    "$z2mload" -p "$broker_port" -r "$room_size" "${floor_z2m[@]}" "${warm[@]}" >/dev/null
    "$z2mload" -p "$broker_port" -r "$room_size" "${z2m[@]}" "${warm[@]}" >/dev/null

    local round point rate count labels
    for ((round = 1; round <= z2m_rounds; round++)); do
        for point in nominal capacity; do
            if [[ $point == nominal ]]; then
                rate=$z2m_rate count=$((z2m_rate * z2m_seconds))
            else
                rate=$z2m_capacity_rate count=$((z2m_capacity_rate * z2m_capacity_seconds))
            fi
            labels="\"scenario\":\"zigbee2mqtt\",\"point\":\"$point\",\"gateway\":\"floor\",\"db\":\"none\",\"round\":$round"
            measure_with "$z2mload" "$floor_pid" "$labels" "${floor_z2m[@]}" -m rate -R "$rate" -c "$count"
            labels="\"scenario\":\"zigbee2mqtt\",\"point\":\"$point\",\"gateway\":\"homegate\",\"db\":\"file\",\"round\":$round"
            measure_with "$z2mload" "$homegate_pid" "$labels" "${z2m[@]}" -m rate -R "$rate" -c "$count"
            # A point above what homegate sustains leaves a backlog; the next point starts without it.
            wait_idle "$homegate_pid"
        done
    done
    stop "$floor_pid"
    stop "$homegate_pid"
    stop "$broker_pid"
    # What homegate logged (warnings and up), but the note that the benchmark broker has no access rules.
    local logged
    logged=$(grep -v "the broker's access rules" "$dir/homegate.log" | cut -c26- | sort | uniq -c | sort -rn | head -5 || true)
    [[ -z $logged ]] || log "homegate's log in the zigbee2mqtt scenario: $logged"
}

# 6: a disk that takes slow_ms per sync, like a hub's SD card (this machine's acknowledges one in about
# a millisecond): homegate runs under LD_PRELOAD=bench/out/slowfsync.so, database on file. (a) The
# zigbee2mqtt load of scenario 5 at slow_rate updates/s with the default commit window, then with
# data.valueCommitWindow 0 (every value on disk before it is published); (b) layout_count addRoom one
# after another, each answered only once on disk; (c) the command round trip at 1,000/s.
slow_disk_scenario() {
    log "slow disk: ${slow_ms} ms per sync; zigbee2mqtt at $slow_rate updates/s, addRoom, round trips"
    [[ -f $slowfsync ]] || { log "no $slowfsync (make bench/out/slowfsync.so)"; exit 1; }
    start_broker slowdisk
    local dir=$work/slowdisk result started setup_ms labels
    local z2m=(-z zigbee2mqtt -b homegate -H Zigbee -k homegate -n "$z2m_devices")
    sync_counts=$dir/syncs
    slow_disk_env "$sync_counts"
    write_z2m_config "$dir" "$slow_window"
    started=$(date +%s%N)
    env "${homegate_env[@]}" "$homegate" run --config "$dir/homegate.yml" 2>>"$dir/homegate.log" &
    homegate_pid=$!
    pids+=("$homegate_pid")
    result=$("$z2mload" -p "$broker_port" -r "$room_size" "${z2m[@]}" -m setup -A) || {
        log "homegate did not take the zigbee2mqtt devices into a home; its log: $(tail -5 "$dir/homegate.log")"
        exit 1
    }
    setup_ms=$((($(date +%s%N) - started) / 1000000))
    wait_idle "$homegate_pid"
    # Proof that the library is in the way of SQLite's syncs: the setup's 526 layout changes synced.
    local setup_syncs
    setup_syncs=$(syncs "$sync_counts")
    ((setup_syncs > 0)) || { log "the slow-disk library counted no sync: is it preloaded?"; exit 1; }
    record "\"scenario\":\"slowdisk-setup\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"devices\":$z2m_devices,\"setup_ms\":$setup_ms,\"syncs\":$setup_syncs"

    # (a) with the commit window, after the warm-up of scenario 5.
    "$z2mload" -p "$broker_port" -r "$room_size" "${z2m[@]}" -m rate -R "$z2m_rate" -c "$z2m_devices" >/dev/null
    wait_idle "$homegate_pid"
    labels="\"scenario\":\"slowdisk-z2m\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"window_s\":$slow_window"
    measure_with "$z2mload" "$homegate_pid" "$labels" "${z2m[@]}" -m rate -R "$slow_rate" -c $((slow_rate * slow_seconds))
    wait_idle "$homegate_pid"
    value_sync_delay "\"scenario\":\"slowdisk-value-sync\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"window_s\":$slow_window" "${z2m[@]}"

    # (b) layout changes, one after another, with no other traffic.
    labels="\"scenario\":\"slowdisk-layout\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms"
    measure "$homegate_pid" "$labels" -b homegate -H Zigbee -m layout -c "$layout_count" -S "$sync_counts"
    stop "$homegate_pid"

    # (a) again without a window: every value is on disk before it is published.
    write_z2m_config "$dir" 0
    env "${homegate_env[@]}" "$homegate" run --config "$dir/homegate.yml" 2>>"$dir/homegate.log" &
    homegate_pid=$!
    pids+=("$homegate_pid")
    sleep 1
    wait_idle "$homegate_pid"
    "$z2mload" -p "$broker_port" -r "$room_size" "${z2m[@]}" -m rate -R "$z2m_rate" -c "$z2m_devices" >/dev/null
    wait_idle "$homegate_pid"
    value_sync_delay "\"scenario\":\"slowdisk-value-sync\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"window_s\":0" "${z2m[@]}"
    labels="\"scenario\":\"slowdisk-z2m\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"window_s\":0,\"drain_limit_s\":$slow_drain_limit"
    measure_with "$z2mload" "$homegate_pid" "$labels" "${z2m[@]}" -m rate -R "$slow_rate" -c $((slow_rate * slow_nowindow_seconds)) -D "$slow_drain_limit"
    stop "$homegate_pid"
    stop "$broker_pid"

    # (c) the command round trip on the home of scenario 1, QoS 1, at 1,000/s.
    start_broker slowdisk-roundtrip
    dir=$work/slowdisk-roundtrip
    sync_counts=$dir/syncs
    slow_disk_env "$sync_counts"
    write_config "$dir" "$round_trip_accessories" false "$slow_window"
    start_homegate "$dir" "$round_trip_accessories"
    wait_idle "$homegate_pid"
    labels="\"scenario\":\"slowdisk-roundtrip\",\"gateway\":\"homegate\",\"sync_ms\":$slow_ms,\"window_s\":$slow_window"
    measure "$homegate_pid" "$labels" -b homegate -n "$round_trip_accessories" -q 1 -m rate -R 1000 -c $((1000 * rate_seconds))
    stop "$homegate_pid"
    stop "$broker_pid"
    homegate_env=() sync_counts=""
}

# value_sync_delay LABELS Z2M-ARGS...: with no other traffic, one update at a time (value_samples of
# them): the time from its value being published (the generator got its answer) to the next sync the
# slow-disk library counts, i.e. how long a device value waits to be on disk; "unsynced" counts the
# updates with no sync within value_sync_limit seconds.
value_samples=3 value_sync_limit=2
value_sync_delay() {
    local labels=$1
    shift
    local delays=() unsynced=0 before answered now_ns
    for ((i = 0; i < value_samples; i++)); do
        sleep 0.5
        before=$(syncs "$sync_counts")
        "$z2mload" -p "$broker_port" -r "$room_size" "$@" -m rate -R 100 -c 1 >/dev/null
        answered=$(date +%s%N)
        while :; do
            now_ns=$(date +%s%N)
            (($(syncs "$sync_counts") > before)) && { delays+=($(((now_ns - answered) / 1000000))); break; }
            ((now_ns - answered < value_sync_limit * 1000000000)) || { unsynced=$((unsynced + 1)); break; }
            sleep 0.005
        done
    done
    local max=-1 sorted
    sorted=$(printf '%s\n' "${delays[@]}" | sort -n | tr '\n' ' ')
    ((${#delays[@]} == 0)) || max=$(printf '%s\n' "${delays[@]}" | sort -n | tail -1)
    record "$labels,\"samples\":$value_samples,\"unsynced\":$unsynced,\"limit_s\":$value_sync_limit,\"max_ms\":$max,\"delays_ms\":\"${sorted% }\""
}

# HomeKit accessories: bench/hap (hap-bench) against HAP-python (scripts/hap-accessory.py, in .build/venv).
hap_scenario() {
    local hap_bench=$root/.build/release/hap-bench figures
    if [[ ! -x $hap_bench || ! -x $root/.build/venv/bin/python ]]; then
        log "hap: no $hap_bench or .build/venv (make bench builds them); skipped"
        return
    fi
    log "hap: pair setup, pair verify, reads, writes, events against HAP-python"
    figures=$("$hap_bench" --root "$root" --homegate "$homegate" --rounds "$hap_rounds" --setups 3 | tail -1)
    figures=${figures#\{}
    # aiohomekit's SRP client, measured the same way in the same run: the baseline of the controller share.
    local aiohomekit='"aiohomekitSrpMedianMs":0'
    if "$root/.build/venv/bin/python" -c "import aiohomekit" 2>/dev/null; then
        aiohomekit=$("$root/.build/venv/bin/python" "$root/bench/hap/aiohomekit-srp.py" | tail -1)
        aiohomekit=${aiohomekit#\{}
        aiohomekit=${aiohomekit%\}}
    else
        log "hap: no aiohomekit in .build/venv (make bench installs it); its figure is 0"
    fi
    record "\"scenario\":\"hap\",${figures%\}},$aiohomekit"
}

# 10: homegate's HomeKit bridge (issue 48) beside HAP-python's accessory server, on the home of
# bench/make-bridge-home.sh (bridge_accessories virtual devices, written to bench/out): hap-bench
# --bridge measures pair setup, pair verify, reads, writes and events against both with the same
# controller in the same run (see bench/hap/BridgeBench.swift); then the hub build's memory with the
# bridge, two controllers subscribed to everything, against the same gateway without the bridge.
bridge_accessories=100
bridge_scenario() {
    local hap_bench=$root/.build/release/hap-bench figures home=$out/bridge-home-$bridge_accessories.yml
    if [[ ! -x $hap_bench || ! -x $root/.build/venv/bin/python ]]; then
        log "bridge: no $hap_bench or .build/venv (make bench builds them); skipped"
        return
    fi
    bench/make-bridge-home.sh "$bridge_accessories" "$room_size" >"$home"
    log "bridge: homegate's HomeKit bridge and HAP-python, $bridge_accessories accessories, $bridge_rounds rounds"
    figures=$("$hap_bench" --bridge --root "$root" --homegate "$homegate" --home "$home" \
        --accessories "$bridge_accessories" --rounds "$bridge_rounds" --setups "$bridge_setups" \
        --verifies "$bridge_verifies" | tail -1)
    figures=${figures#\{}
    record "\"scenario\":\"bridge\",${figures%\}}"
    if [[ ! -x $hub_homegate ]]; then
        log "bridge memory: no $hub_homegate (make hub); skipped"
        return
    fi
    strip_hub_build
    # The gateway with and without the bridge, `pairs` times in turn, each after the same load as the
    # hub section's (window_count writes over MQTT, here to the home's switches with half as many in
    # flight: loadgen keeps one a switch; each an event to both controllers when the bridge is there).
    local switches=$((bridge_accessories / 2)) round variant
    start_broker bridge-memory
    for ((round = 1; round <= pairs; round++)); do
        for variant in without with; do bridge_memory "$variant" "$round" "$home" "$switches"; done
    done
    stop "$broker_pid"
}

# bridge_memory without|with ROUND HOME SWITCHES: one memory figure of the hub build for the bridge section.
bridge_memory() {
    local variant=$1 round=$2 home=$3 switches=$4 dir=$work/bridge-$1-$2 homegate=$hub_stripped holder=""
    write_config "$dir" "$bridge_accessories" false "" "$home"
    local port
    if [[ $variant == with ]]; then
        port=$(free_port)
        cat >>"$dir/homegate.yml" <<CONF
homekit:
  advertise: false
  bridges:
    - {home: Bench, account: owner, port: $port, listen: 127.0.0.1}
CONF
    fi
    start_homegate "$dir" "$switches"
    wait_idle "$homegate_pid"
    local subscribed=0 events=0
    if [[ $variant == with ]]; then
        wait_for_port "$port" || { log "bridge memory: the bridge does not listen on $port"; exit 1; }
        local code
        code=$("$homegate" homekit-code --config "$dir/homegate.yml" --home Bench 2>/dev/null | sed -n 's/.*setup code of Bench: \([0-9-]*\).*/\1/p')
        "$root/.build/release/hap-bench" --bridge-hold --port "$port" --code "$code" >"$dir/hold.out" 2>&1 &
        holder=$!
        pids+=("$holder")
        for _ in $(seq 600); do grep -q '"ready"' "$dir/hold.out" && break; kill -0 "$holder" 2>/dev/null || break; sleep 0.1; done
        grep -q '"ready"' "$dir/hold.out" || { log "bridge memory: the controllers did not subscribe: $(cat "$dir/hold.out")"; exit 1; }
        subscribed=$(field "$(grep '"ready"' "$dir/hold.out")" subscribed)
    fi
    measure "$homegate_pid" "\"scenario\":\"bridge-load\",\"bridge\":\"$variant\",\"round\":$round" -b homegate -n "$switches" -q 1 -m window -w "$((switches / 2))" -c "$window_count"
    memory_split "$homegate_pid" "\"gateway\":\"homegate\",\"build\":\"hub\",\"accessories\":$bridge_accessories,\"bridge\":\"$variant\",\"round\":$round,\"controllers_subscribed_to\":$subscribed" bridge-memory
    if [[ -n $holder ]]; then
        kill "$holder" 2>/dev/null || true
        wait "$holder" 2>/dev/null || true
        log "bridge memory: the controllers' events: $(tail -1 "$dir/hold.out")"
    fi
    stop "$homegate_pid"
}

# The hub build as a hub runs it, stripped, at $hub_stripped (the hub section and the soak share it).
hub_stripped=$out/homegate-hub
strip_hub_build() {
    [[ $hub_stripped -nt $hub_homegate ]] || strip -o "$hub_stripped" "$hub_homegate"
}

# 7: the release build for a hub (`make hub`: static Swift libraries, the code laid out by
# scripts/hub/symbol-order.txt, in .build-hub), stripped; its size, whether it runs, what it still loads
# from the system, and how much of its layout's list it still has.
hub_scenario() {
    if [[ ! -x $hub_homegate ]]; then
        log "hub build: no $hub_homegate (make hub); skipped"
        return
    fi
    local stripped=$hub_stripped runs=false needed libraries
    strip_hub_build
    "$stripped" --help >/dev/null 2>&1 && runs=true
    # What it names itself (NEEDED), and what the loader brings in with them (ldd: libmosquitto's own).
    needed=$(objdump -p "$stripped" | awk '$1 == "NEEDED" { sub(/\.so.*/, "", $2); printf "%s%s", sep, $2; sep = " " }')
    libraries=$(ldd "$stripped" | awk '$1 !~ /^linux-vdso/ { sub(/\.so.*/, "", $1); sub(/^.*\//, "", $1); printf "%s%s", sep, $1; sep = " " }')
    # Its code layout: how many of the functions scripts/hub/symbol-order.txt lists the binary still has (a
    # function renamed or added since the profile is laid out among the cold code).
    local listed found
    listed=$(wc -l <"$root/scripts/hub/symbol-order.txt")
    found=$(nm --defined-only "$hub_homegate" | awk 'NR == FNR { listed[$0] = 1; next } ($3 in listed) && !seen[$3]++ { n++ } END { print n + 0 }' "$root/scripts/hub/symbol-order.txt" -)
    record "\"scenario\":\"hub-build\",\"binary_mb\":$(stat -c %s "$hub_homegate" | awk '{ printf "%.1f", $1 / 1048576 }'),\"stripped_mb\":$(stat -c %s "$stripped" | awk '{ printf "%.1f", $1 / 1048576 }'),\"default_build_mb\":$(stat -c %s "$homegate" | awk '{ printf "%.1f", $1 / 1048576 }'),\"runs\":$runs,\"needed\":\"$needed\",\"libraries\":\"$libraries\",\"order_listed\":$listed,\"order_found\":$found"
    $runs || return 0

    # Its memory at 1,000 accessories after the same load as scenario 2's (the Swift runtime and
    # Foundation are then part of the executable, not shared libraries).
    start_broker hub
    local dir=$work/hub homegate=$stripped
    write_config "$dir" "$round_trip_accessories" false
    start_homegate "$dir" "$round_trip_accessories"
    wait_idle "$homegate_pid"
    measure "$homegate_pid" "\"scenario\":\"hub-load\",\"gateway\":\"homegate\"" -b homegate -n "$round_trip_accessories" -q 1 -m window -w "$window" -c "$window_count"
    memory_split "$homegate_pid" "\"gateway\":\"homegate\",\"build\":\"hub\",\"accessories\":$round_trip_accessories"
    stop "$homegate_pid"
    stop "$broker_pid"
}

# 9: a reachability flap against the size of the home (bench/flap): CPU per flap, and one late
# `$layout`, at 100, 1,000 and 10,000 accessories, `pairs` rounds interleaved (the medians count).
flap_scenario() {
    local flap_bench=$root/.build/release/flap-bench figures
    if [[ ! -x $flap_bench ]]; then
        log "flap: no $flap_bench (make bench builds it); skipped"
        return
    fi
    log "flap: reachability flaps at ${scales[*]} accessories"
    figures=$("$flap_bench" --root "$root" --sizes "$(IFS=,; echo "${scales[*]}")" --flaps "$flap_count" --rounds "$pairs" | tail -1)
    figures=${figures#\{}
    record "\"scenario\":\"flap\",${figures%\}}"
}

# 8: memory over soak_seconds (ten minutes; one with --quick) of commands at soak_rate/s against
# 1,000 accessories, RSS sampled every soak_sample seconds: whether it stays flat, and where it is.
# It soaks the hub build (the one the README gives a Raspberry Pi, stripped), or the release build
# when there is none.
soak_scenario() {
    local soak_seconds=${BENCH_SOAK_SECONDS:-$soak_length} soak_rate=1000 soak_sample=30
    local build=release homegate=$homegate
    if [[ -x $hub_homegate ]]; then
        build=hub homegate=$hub_stripped
        strip_hub_build
    fi
    log "soak: ${soak_seconds}s at ${soak_rate} writes/s, $round_trip_accessories accessories, $build build"
    start_broker soak
    local dir=$work/soak
    write_config "$dir" "$round_trip_accessories" false
    start_homegate "$dir" "$round_trip_accessories"
    wait_idle "$homegate_pid"
    local before samples="" generator anon
    before=$(rss_mb "$homegate_pid")
    "$loadgen" -p "$broker_port" -r "$room_size" -b homegate -n "$round_trip_accessories" -q 1 -m rate \
        -R "$soak_rate" -c $((soak_rate * soak_seconds)) >"$work/soak.out" &
    generator=$!
    while kill -0 "$generator" 2>/dev/null; do
        sleep "$soak_sample"
        kill -0 "$generator" 2>/dev/null || break
        samples+="${samples:+ }$(rss_mb "$homegate_pid")"
    done
    wait "$generator"
    anon=$(awk '/^RssAnon:/ { printf "%.1f", $2 / 1024 }' "/proc/$homegate_pid/status")
    local result
    result=$(cat "$work/soak.out")
    record "\"scenario\":\"soak\",\"gateway\":\"homegate\",\"build\":\"$build\",\"seconds\":$soak_seconds,\"rate\":$soak_rate,\"rss_before_mb\":$before,\"rss_samples_mb\":\"$samples\",\"rss_anon_after_mb\":$anon,\"answered\":$(field "$result" answered),\"lost\":$(field "$result" lost),\"p50_ms\":$(field "$result" p50_ms),\"p99_ms\":$(field "$result" p99_ms)"
    stop "$homegate_pid"
    stop "$broker_pid"
}

# 11: history (issue 51). (a) The command round trip with recording on and off in the same run: the
# home of round_trip_accessories switches (each write a recorded change), database on file, QoS 1,
# three gateways on one broker: history.enabled true under base topic homegate (on), false under
# nohistory (off) and under nohistory2 (off2, the noise: how far two gateways without recording move
# apart on this machine). At 1,000/s, paired: history_sets sets of one block of history_block seconds
# per gateway, back to back (BENCH_HISTORY_GAP: apart) in an order that goes through every permutation (loadgen -m paired, one
# generator switching its target block by block at one exact rate, after 2 sets to warm up), so the
# machine's load of the moment weighs on the three alike; bench/tail.py pools each gateway's writes
# and gives the ratios an interval by drawing whole sets again. Then 5,000/s and the window, `pairs`
# times, on and off in turns.
# (b) `homegate bench-history` in the hub build (the release build when there is none):
# history_series characteristics changing once a minute for history_days simulated days into a
# history file (the store's clock moved by the simulation, not waited for), the file's size by day,
# then a week's query of one characteristic and a day of its raw points, history_queries times each.
history_series=100 history_queries=50
history_scenario() {
    log "history: round trips with recording on and off, $round_trip_accessories accessories, $history_sets sets of ${history_block}s blocks per gateway at 1,000/s, ${history_gap}s between blocks"
    start_broker history
    [[ -z $history_ab ]] || log "history: off2 below is $history_ab with recording on, not the noise"
    local on_dir=$work/history-on off_dir=$work/history-off noise_dir=$work/history-off2 tails=$work/history-paired.txt
    write_config "$on_dir" "$round_trip_accessories" false
    printf 'history:\n  enabled: true\n' >>"$on_dir/homegate.yml"
    local dir name
    for dir in "$off_dir" "$noise_dir"; do
        name=nohistory${dir##*off}
        write_config "$dir" "$round_trip_accessories" false
        if [[ -n $history_ab && $dir == "$noise_dir" ]]; then
            printf 'history:\n  enabled: true\n' >>"$dir/homegate.yml"
        else
            printf 'history:\n  enabled: false\n' >>"$dir/homegate.yml"
        fi
        sed -i "s/baseTopic: homegate/baseTopic: $name/; s/clientId: homegate-bench/clientId: homegate-$name/" \
            "$dir/homegate.yml"
    done
    start_homegate "$on_dir" "$round_trip_accessories"
    local -A pid_of base_of=([on]=homegate [off]=nohistory [off2]=nohistory2)
    pid_of[on]=$homegate_pid
    # start_homegate waits for the homegate/ topics; these are under nohistory/ and nohistory2/.
    "$homegate" run --config "$off_dir/homegate.yml" 2>>"$off_dir/homegate.log" &
    pid_of[off]=$!
    pids+=("${pid_of[off]}")
    "${history_ab:-$homegate}" run --config "$noise_dir/homegate.yml" 2>>"$noise_dir/homegate.log" &
    pid_of[off2]=$!
    pids+=("${pid_of[off2]}")
    local gateway
    for gateway in on off off2; do wait_idle "${pid_of[$gateway]}"; done
    # history_point GATEWAY LOAD ROUND: one point for GATEWAY (on or off).
    history_point() {
        local gateway=$1 load=$2 round=$3
        local labels="\"scenario\":\"history-roundtrip\",\"gateway\":\"$gateway\",\"db\":\"file\",\"load\":\"$load\",\"round\":$round"
        local args=(-b "${base_of[$gateway]}" -n "$round_trip_accessories" -q 1)
        case $load in
        window) measure "${pid_of[$gateway]}" "$labels" "${args[@]}" -m window -w "$window" -c "$window_count" ;;
        *) measure "${pid_of[$gateway]}" "$labels" "${args[@]}" -m rate -R "$load" -c $((load * rate_seconds)) ;;
        esac
    }
    # The paired run: each gateway's CPU over it and the load average every 30 s.
    local -A cpu_before threads_before
    for gateway in on off off2; do
        cpu_before[$gateway]=$(cpu_seconds "${pid_of[$gateway]}")
        threads_before[$gateway]=$(thread_ticks "${pid_of[$gateway]}")
    done
    "$loadgen" -p "$broker_port" -r "$room_size" -n "$round_trip_accessories" -q 1 -m paired -R 1000 \
        -B homegate,nohistory,nohistory2 -s "$history_block" -G "$history_gap" -c "$history_sets" -o "$tails" >"$work/loadgen.out" &
    local generator=$! loads="" second=0
    while kill -0 "$generator" 2>/dev/null; do
        ((second++ % 30)) || loads+="${loads:+ }$(cut -d' ' -f1 /proc/loadavg)"
        sleep 1
    done
    wait "$generator"
    local paired
    paired=$(cat "$work/loadgen.out")
    log "history: paired $paired"
    local cpu_figures=""
    local spent threads_after
    for gateway in on off off2; do
        threads_after=$(thread_ticks "${pid_of[$gateway]}")
        spent=$(awk -v a="${cpu_before[$gateway]}" -v b="$(cpu_seconds "${pid_of[$gateway]}")" 'BEGIN { printf "%.2f", b - a }')
        cpu_figures+=",\"${gateway}_cpu_s\":$spent"
        cpu_figures+=",\"${gateway}_threads\":\"$(thread_seconds "${threads_before[$gateway]}" "$threads_after" "$spent")\""
    done
    local tail
    tail=$("$root/.build/venv/bin/python" "$root/bench/tail.py" "$tails") || { log "history: bench/tail.py failed"; exit 1; }
    tail=${tail#\{}
    record "\"scenario\":\"history-tail\",\"block_s\":$history_block,\"gap_s\":$history_gap,\"lost\":$(field "$paired" lost),\"loads\":\"$loads\"$cpu_figures,${tail%\}}"
    local order round=0
    for load in 5000 $(for ((pair = 0; pair < pairs; pair++)); do echo window; done); do
        round=$((round + 1))
        if ((round % 2)); then order=(on off); else order=(off on); fi
        for gateway in "${order[@]}"; do history_point "$gateway" "$load" "$round"; done
    done
    record "\"scenario\":\"history-load\",\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\""
    for gateway in on off off2; do stop "${pid_of[$gateway]}"; done
    stop "$broker_pid"
    if [[ -s $on_dir/data/history.sqlite ]]; then
        log "history: the recording gateway's file after the round trips: $(du -k "$on_dir/data/history.sqlite"* | awk '{ n += $1 } END { print n }') KB"
    else
        log "history: the recording gateway wrote no history file"
        exit 1
    fi

    local build=release binary=$homegate figures
    if [[ -x $hub_homegate ]]; then
        build=hub binary=$hub_stripped
        strip_hub_build
    fi
    log "history: $history_series characteristics × $history_days simulated days, $build build"
    mkdir -p "$work/history-month"
    figures=$("$binary" bench-history --directory "$work/history-month" --series "$history_series" \
        --days "$history_days" --queries "$history_queries" 2> >(sed 's/^/  /' >&2) | tail -1)
    figures=${figures#\{}
    record "\"scenario\":\"history\",\"build\":\"$build\",\"queries\":$history_queries,${figures%\}}"
}

# 12: timers (issue 49). The home of 100 switches on file, its time zone UTC (setLocation), with
# an action set of one write ("Tick", addActionSet over MQTT). (a) The gateway's CPU time and context
# switches over idle_seconds at rest, without automations. Then, the gateway stopped, timer_count
# timer automations that run Tick go into its database (sqlite3, the rows addTrigger writes; made
# over MQTT, in windows under the in-flight limit, 10,000 still take too long for a benchmark run:
# each edit republishes the home's whole $layout, docs/benchmarks.md "Timers"): timer_count -
# timer_burst daily ones spread over the day after tomorrow, timer_burst due in one minute a little
# later. Restarted on a fresh broker: (a) again with them all: one wake-up for the next due firing
# costs nothing measurable, a poll would; (b) how late the burst fires: each didFireTrigger's
# arrival on $events (mosquitto_sub's clock, %U) less the minute it was due, one after another.
timer_count=10000 timer_burst=100
timers_scenario() {
    log "timers: $timer_count timer automations in the home of 100 switches, $timer_burst due in one minute"
    start_broker timers
    local dir=$work/timers requests='homegate/$request/owner' answers='homegate/$response/owner'
    local events='homegate/Bench/$events' database=$work/timers/data/home.sqlite
    write_config "$dir" 100 false
    start_homegate "$dir" 100
    # request OPERATION BODY: sends one request as owner and waits for its answer, which must be ok.
    request() {
        local answer
        answer=$(mosquitto_sub -p "$broker_port" -t "$answers" -q 1 -C 1 -W 30 &
            sleep 0.3
            mosquitto_pub -p "$broker_port" -t "$requests/$1" -q 1 -m "$2"
            wait)
        [[ $answer == *'"ok":true'* ]] || { log "timers: $1 was answered $answer"; exit 1; }
    }
    request setLocation '{"home":"Bench","latitude":0,"longitude":0,"timeZone":"UTC"}'
    request addActionSet '{"home":"Bench","name":"Tick","actions":[{"accessory":"Switch 1","service":"Switch","characteristic":"On","value":true}]}'
    local rest_without switches_without before switches
    wait_idle "$homegate_pid"
    switches=$(context_switches "$homegate_pid")
    before=$(cpu_seconds "$homegate_pid")
    sleep "$idle_seconds"
    rest_without=$(awk -v a="$before" -v b="$(cpu_seconds "$homegate_pid")" 'BEGIN { printf "%.2f", b - a }')
    switches_without=$(switches_since "$homegate_pid" "$switches")
    stop "$homegate_pid"
    stop "$broker_pid"

    local home action_set later due due_text now
    home=$(sqlite3 "$database" "SELECT id FROM home WHERE name = 'Bench'")
    action_set=$(sqlite3 "$database" "SELECT id FROM actionSet WHERE name = 'Tick'")
    later=$(date -u -d '+2 days' +%Y-%m-%d)
    now=$(date +%s)
    # The burst's minute: after the start and the rest measurement to come, with a margin.
    due=$(((now + idle_seconds + 120) / 60 * 60 + 60))
    due_text=$(date -u -d "@$due" +%Y-%m-%dT%H:%M)
    awk -v n="$timer_count" -v burst="$timer_burst" -v day="$later" -v at="$due_text" -v home="$home" \
        -v set="$action_set" -v since="$now" 'BEGIN {
        print "BEGIN;"
        for (i = 1; i <= n; i++) {
            if (i <= n - burst)
                schedule = sprintf("{\"kind\":\"timer\",\"recurrence\":{\"every\":1,\"unit\":\"days\"},\"start\":\"%sT%02d:%02d\"}", day, int((i % 1440) / 60), i % 60)
            else
                schedule = sprintf("{\"kind\":\"timer\",\"start\":\"%s\"}", at)
            printf "INSERT INTO automationTrigger (id, homeID, name, position, isEnabled, schedule) VALUES (%s, %s, %s, %d, 1, %s);\n", \
                q("bench-timer-" i), q(home), q("Timer " i), i - 1, q(schedule)
            printf "INSERT INTO triggerActionSet (triggerID, position, actionSetID) VALUES (%s, 0, %s);\n", q("bench-timer-" i), q(set)
            printf "INSERT INTO scheduleState (triggerID, since) VALUES (%s, %d);\n", q("bench-timer-" i), since
        }
        print "COMMIT;"
    }
    function q(text) { gsub(/'\''/, "'\'''\''", text); return "'\''" text "'\''" }' | sqlite3 "$database"
    local stored
    stored=$(sqlite3 "$database" "SELECT count(*) FROM automationTrigger")
    ((stored == timer_count)) || { log "timers: the database holds $stored automations"; exit 1; }

    start_broker timers-with
    write_config "$dir" 100 false
    local heard=$work/timers/events fired=$work/timers/fired
    start_homegate "$dir" 100
    local pid=$homegate_pid start_with_ms=$startup_ms
    mosquitto_sub -p "$broker_port" -t "$events" -q 1 -F '%U %p' >"$heard" &
    local listener=$!
    pids+=("$listener")
    wait_idle "$pid"
    local rss_with rest_with switches_with
    rss_with=$(rss_mb "$pid")
    switches=$(context_switches "$pid")
    before=$(cpu_seconds "$pid")
    sleep "$idle_seconds"
    rest_with=$(awk -v a="$before" -v b="$(cpu_seconds "$pid")" 'BEGIN { printf "%.2f", b - a }')
    switches_with=$(switches_since "$pid" "$switches")
    local margin=$((due - $(date +%s)))
    ((margin > 0)) || log "timers: the rest measurement ran into the burst's minute ($((-margin)) s): its figure includes firings"
    for _ in $(seq $((margin + 120))); do
        (($(grep -c '"event":"didFireTrigger"' "$heard" || true) >= timer_burst)) && break
        sleep 1
    done
    stop "$listener"
    grep '"event":"didFireTrigger"' "$heard" >"$fired" || true
    local got lateness
    got=$(wc -l <"$fired")
    # Lateness in ms of each firing: its arrival less the minute it was due.
    lateness=$(awk -v due="$due" '{ printf "%.1f\n", ($1 - due) * 1000 }' "$fired" | sort -n |
        awk '{ v[NR] = $1 } END { if (NR) printf "\"first_ms\":%s,\"p50_ms\":%s,\"p99_ms\":%s,\"max_ms\":%s", v[1], v[int((NR + 1) / 2)], v[int(NR * 0.99 + 0.999)], v[NR]; else printf "\"first_ms\":null" }')
    record "\"scenario\":\"timers\",\"timers\":$timer_count,\"start_with_ms\":$start_with_ms,\"seconds\":$idle_seconds,\"cpu_s_without\":$rest_without,\"switches_without\":$switches_without,\"cpu_s_with\":$rest_with,\"switches_with\":$switches_with,\"rss_with_mb\":$rss_with,\"burst\":$timer_burst,\"fired\":$got,$lateness,\"load\":\"$(cut -d' ' -f1-3 /proc/loadavg)\""
    stop "$pid"
    stop "$broker_pid"
}

began=$(date +%s)
if wanted roundtrip; then round_trip_scenario; fi
if wanted serving; then serving_scenario; fi
if wanted scale; then for accessories in "${scales[@]}"; do scale_scenario "$accessories"; done; fi
if wanted zigbee2mqtt; then zigbee2mqtt_scenario; fi
if wanted slowdisk; then slow_disk_scenario; fi
if wanted hap; then hap_scenario; fi
if wanted bridge; then bridge_scenario; fi
if wanted hub; then hub_scenario; fi
if wanted flap; then flap_scenario; fi
if wanted soak; then soak_scenario; fi
if wanted history; then history_scenario; fi
if wanted timers; then timers_scenario; fi
duration=$(($(date +%s) - began))
log "done in ${duration}s"

bench/report.sh "$results" "$duration" "$quick" "${only:+partial}"
