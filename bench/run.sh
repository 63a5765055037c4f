#!/usr/bin/env bash
# The benchmark behind `make bench`: homegate against the floor (bench/floor.c, the fastest gateway
# libmosquitto allows) on the same private mosquitto, in the same run, interleaved point by point.
# Prints a table, writes bench/out/results.json and the figures of docs/benchmarks.md.
#
# usage: bench/run.sh [--quick]      (--quick: shorter runs, for trying the script itself)
# Expects the release build of homegate and bench/out/{floor,loadgen,z2mfloor,z2mload} (the Makefile
# builds them).
set -euo pipefail

cd "$(dirname "$0")/.."
root=$PWD
out=$root/bench/out
homegate=${HOMEGATE:-$root/.build/release/homegate}
floor=$out/floor
loadgen=$out/loadgen
z2mfloor=$out/z2mfloor
z2mload=$out/z2mload
quick=false
[[ ${1:-} == --quick ]] && quick=true

# Run lengths: each fixed-rate point lasts about 5 s, the window runs send 10,000 writes; the
# zigbee2mqtt points (z2m_rate for z2m_seconds, then z2m_capacity_rate, above what homegate sustains,
# for z2m_capacity_seconds) are repeated z2m_rounds times per gateway.
if $quick; then
    rate_seconds=2 window_count=3000 scales=(100 1000) actionset_runs=5
    z2m_seconds=3 z2m_capacity_seconds=2 z2m_rounds=1
else
    rate_seconds=5 window_count=10000 scales=(100 1000 10000) actionset_runs=20
    z2m_seconds=10 z2m_capacity_seconds=4 z2m_rounds=3
fi
z2m_devices=500 z2m_rate=2000 z2m_capacity_rate=5000
window=100
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
    rm -rf "$work"
}
trap cleanup EXIT

log() { printf '%s bench: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# ---- processes --------------------------------------------------------------------------------

free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 40000))
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return; }
    done
}

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
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$broker_port") 2>/dev/null && return
        sleep 0.05
    done
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

# write_config DIR ACCESSORIES IN_MEMORY: homegate's config for the benchmark home.
write_config() {
    local dir=$1
    mkdir -p "$dir/data"
    [[ -f $work/home-$2.yml ]] || bench/make-home.sh "$2" "$room_size" >"$work/home-$2.yml"
    cat >"$dir/homegate.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:$broker_port
  clientId: homegate-bench
  baseTopic: homegate
data:
  directory: $dir/data
  inMemory: $3
accessories:
  virtual: $work/home-$2.yml
commands:
  timeout: 10
  # The benchmark measures what the gateway can do; the per-account limit (50/s) would measure itself
  rateLimit: null
logging:
  level: warning
CONF
}

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
    "$homegate" run --config "$dir/homegate.yml" 2>>"$dir/homegate.log" &
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

rss_mb() { awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status"; }

# measure PID LABELS LOADGEN-ARGS...: runs the load generator against the process PID while sampling
# its RSS, and records the generator's figures with the process's CPU time and peak RSS.
measure() { measure_with "$loadgen" "$@"; }

# measure_with GENERATOR PID LABELS ARGS...: the same with another generator (bench/out/z2mload).
measure_with() {
    local generator_binary=$1 pid=$2 labels=$3
    shift 3
    local cpu_before cpu_after peak=0 rss result
    cpu_before=$(cpu_seconds "$pid")
    "$generator_binary" -p "$broker_port" -r "$room_size" "$@" >"$work/loadgen.out" &
    local generator=$!
    while kill -0 "$generator" 2>/dev/null; do
        rss=$(rss_mb "$pid")
        peak=$(awk -v a="$peak" -v b="$rss" 'BEGIN { print (b > a ? b : a) }')
        sleep 0.2
    done
    wait "$generator"
    cpu_after=$(cpu_seconds "$pid")
    result=$(cat "$work/loadgen.out")
    local cpu
    cpu=$(awk -v a="$cpu_before" -v b="$cpu_after" 'BEGIN { printf "%.2f", b - a }')
    printf '{%s,%s,"cpu_s":%s,"rss_load_mb":%s}\n' "$labels" "${result:1:${#result}-2}" "$cpu" "$peak" >>"$results"
    log "$labels $(tail -1 "$results" | sed 's/.*"mode"/"mode"/')"
}

record() { printf '{%s}\n' "$1" >>"$results"; log "$1"; }

# wait_idle PID: waits until the process used less than 5 % of a core for a whole second (at most
# 10 minutes): a gateway still publishing what it was just asked to do is not yet ready for a point.
wait_idle() {
    local before after
    for _ in $(seq 600); do
        before=$(cpu_seconds "$1")
        sleep 1
        after=$(cpu_seconds "$1")
        awk -v a="$before" -v b="$after" 'BEGIN { exit !(b - a < 0.05) }' && return
    done
    log "process $1 did not come to rest"
    exit 1
}

# round_trips GATEWAY PID BASE QOS DB: the fixed rates and the window, for one gateway.
round_trip_point() {
    local gateway=$1 pid=$2 base=$3 qos=$4 db=$5 load=$6
    local labels="\"scenario\":\"roundtrip\",\"gateway\":\"$gateway\",\"db\":\"$db\",\"load\":\"$load\""
    local common=(-b "$base" -n "$round_trip_accessories" -q "$qos")
    case $load in
    window) measure "$pid" "$labels" "${common[@]}" -m window -w "$window" -c "$window_count" ;;
    *) measure "$pid" "$labels" "${common[@]}" -m rate -R "$load" -c $((load * rate_seconds)) ;;
    esac
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
        for load in 1000 5000 window; do
            round_trip_point floor "$floor_pid" floor "$qos" none "$load"
            round_trip_point homegate "$file_pid" homegate "$qos" file "$load"
        done
        stop "$floor_pid"
    done
    stop "$file_pid"

    # The same home with the database in memory, against the floor again (QoS 1).
    write_config "$memory_dir" "$round_trip_accessories" true
    start_homegate "$memory_dir" "$round_trip_accessories"
    start_floor 1
    for load in 1000 5000 window; do
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

# 2: homes of growing size. The first start builds the home into an empty database (seed); the
# measured start is the second one, on a fresh broker, as after a reboot of the hub.
scale_scenario() {
    local accessories=$1 dir=$work/scale-$1
    log "scale: $accessories accessories"
    start_broker "scale-$accessories-seed"
    write_config "$dir" "$accessories" false
    start_homegate "$dir" "$accessories"
    local seed_ms=$startup_ms
    stop "$homegate_pid"
    stop "$broker_pid"

    start_broker "scale-$accessories"
    write_config "$dir" "$accessories" false
    start_homegate "$dir" "$accessories"
    sleep 2
    local idle
    idle=$(rss_mb "$homegate_pid")
    record "\"scenario\":\"scale\",\"gateway\":\"homegate\",\"accessories\":$accessories,\"first_start_ms\":$seed_ms,\"startup_ms\":$startup_ms,\"rss_idle_mb\":$idle"
    local labels="\"scenario\":\"scale-load\",\"gateway\":\"homegate\",\"accessories\":$accessories"
    measure "$homegate_pid" "$labels" -b homegate -n "$accessories" -q 1 -m window -w "$window" -c "$window_count"
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
    local dir=$1
    mkdir -p "$dir/data"
    cat >"$dir/homegate.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:$broker_port
  clientId: homegate-bench
  baseTopic: homegate
data:
  directory: $dir/data
  inMemory: false
accessories:
  zigbee2mqtt:
    baseTopic: zigbee2mqtt
commands:
  timeout: 10
  rateLimit: null
logging:
  level: warning
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

began=$(date +%s)
round_trip_scenario
for accessories in "${scales[@]}"; do scale_scenario "$accessories"; done
zigbee2mqtt_scenario
duration=$(($(date +%s) - began))
log "done in ${duration}s"

bench/report.sh "$results" "$duration" "$quick"
