#!/usr/bin/env bash
# Writes scripts/hub/symbol-order.txt: the functions the hub build runs, for its code layout (`make hub`).
#
# usage: scripts/hub-profile.sh HUB_BINARY   (`make hub-profile` builds what it needs and calls it)
#
# HUB_BINARY is the unstripped hub build. Under valgrind's callgrind (which lists every function that
# ran, not a sample) it runs what a hub does, against a private mosquitto on a free loopback port:
#   1. a first start with 1,000 virtual switches and the web page listening, then characteristic
#      writes (QoS 1 in a window, QoS 0 at a rate), action sets and layout requests;
#   2. the same again with the database built (a hub after a reboot);
#   3. zigbee2mqtt (bench/out/z2mload playing it): the devices taken into a home through requests,
#      then state updates;
#   4. a HomeKit bridge of 100 accessories (bench/make-bridge-home.sh): two controllers pair, verify,
#      read the accessories and subscribe (`hap-bench --bridge-hold`), then MQTT writes become events.
# It needs bench/out/loadgen, bench/out/z2mload and .build/release/hap-bench (the Makefile builds them)
# and valgrind, which it installs. Callgrind is 50 times slower than the gateway: a run takes a minute or two.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
source "$root/scripts/apt-install.sh"
source "$root/scripts/loopback.sh"
apt_install hub-profile valgrind

binary=${1:?usage: scripts/hub-profile.sh HUB_BINARY}
loadgen=$root/bench/out/loadgen
z2mload=$root/bench/out/z2mload
hap_bench=$root/.build/release/hap-bench
for tool in "$loadgen" "$z2mload" "$hap_bench"; do
    [[ -x $tool ]] || { echo "hub-profile: no $tool (make hub-profile builds it)" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/homegate-hub-profile.XXXXXX")
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
log() { printf '%s hub-profile: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# valgrind 3.19 (Debian 12) cannot read the toolchain's DWARF 5: it profiles a copy without it,
# whose symbols are the same.
profiled=$work/homegate
strip --strip-debug -o "$profiled" "$binary"

port=$(free_port)
printf 'per_listener_settings false\nset_tcp_nodelay true\nallow_anonymous true\nmax_queued_messages 1000000\nlistener %s 127.0.0.1\n' \
    "$port" >"$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" 2>"$work/mosquitto.log" &
pids+=($!)
wait_for_port "$port" || { log "mosquitto did not start: $(cat "$work/mosquitto.log")"; exit 1; }

# config NAME ACCESSORIES-SECTION: a gateway config in $work/NAME.yml, its database in $work/NAME.
config() {
    mkdir -p "$work/$1"
    cat >"$work/$1.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:$port
  clientId: homegate-profile
  baseTopic: homegate
data:
  directory: $work/$1
accessories:
$2
commands:
  rateLimit: null
logging:
  level: warning
web:
  listen: 127.0.0.1:$(free_port)
CONF
}

# profile NAME CONFIG: starts the gateway under callgrind (its profile in $work/NAME.callgrind).
profile() {
    valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/$1.callgrind" \
        "$profiled" run --config "$work/$2.yml" 2>>"$work/$2.log" &
    gateway=$!
    pids+=("$gateway")
}

stop() {
    kill "$gateway"
    wait "$gateway" || true
}

"$root/bench/make-home.sh" 1000 20 >"$work/home.yml"
config virtual "  virtual: $work/home.yml"
for round in first-start second-start; do
    log "$round: 1,000 virtual switches"
    "$loadgen" -p "$port" -m startup -n 1000 -t 600 >"$work/startup.out" &
    watcher=$!
    sleep 0.3
    profile "$round" virtual
    wait "$watcher" || { log "the gateway did not publish the home: $(tail -5 "$work/virtual.log")"; exit 1; }
    "$loadgen" -p "$port" -r 20 -n 1000 -q 1 -m window -w 20 -c 1000 -t 60 >/dev/null
    "$loadgen" -p "$port" -r 20 -n 1000 -q 0 -m rate -R 100 -c 300 -t 60 >/dev/null
    "$loadgen" -p "$port" -r 20 -n 1000 -q 1 -m actionset -c 3 -t 120 >/dev/null
    "$loadgen" -p "$port" -m layout -c 5 -t 60 >/dev/null
    stop
done

log "zigbee2mqtt: 50 devices"
config zigbee2mqtt "  zigbee2mqtt:
    baseTopic: zigbee2mqtt"
profile zigbee2mqtt zigbee2mqtt
z2m=(-p "$port" -r 20 -z zigbee2mqtt -b homegate -H Zigbee -k homegate -n 50 -t 60)
"$z2mload" "${z2m[@]}" -m setup -A >/dev/null || { log "zigbee2mqtt setup failed: $(tail -5 "$work/zigbee2mqtt.log")"; exit 1; }
"$z2mload" "${z2m[@]}" -m rate -R 100 -c 500 >/dev/null
stop

log "HomeKit bridge: 100 accessories, two controllers subscribed"
"$root/bench/make-bridge-home.sh" 100 20 >"$work/bridge-home.yml"
bridge_port=$(free_port)
config bridge "  virtual: $work/bridge-home.yml"
printf 'homekit:\n  advertise: false\n  bridges:\n    - {home: Bench, account: owner, port: %s, listen: 127.0.0.1}\n' \
    "$bridge_port" >>"$work/bridge.yml"
profile bridge bridge
until (exec 3<>"/dev/tcp/127.0.0.1/$bridge_port") 2>/dev/null; do
    kill -0 "$gateway" 2>/dev/null || { log "the bridge did not listen: $(tail -5 "$work/bridge.log")"; exit 1; }
    sleep 0.5
done
code=$("$profiled" homekit-code --config "$work/bridge.yml" --home Bench | sed -n 's/.*setup code of Bench: \([0-9-]*\).*/\1/p')
"$hap_bench" --bridge-hold --port "$bridge_port" --code "$code" >"$work/hold.out" 2>&1 &
holder=$!
pids+=("$holder")
until grep -q '"ready"' "$work/hold.out"; do
    kill -0 "$holder" 2>/dev/null || { log "the controllers did not subscribe: $(cat "$work/hold.out")"; exit 1; }
    sleep 0.5
done
"$loadgen" -p "$port" -b homegate -r 20 -n 50 -q 1 -m window -w 10 -c 500 -t 120 >/dev/null
kill "$holder"
wait "$holder" || true
stop

# What a hub runs after a reboot first, then what only a first start adds, then zigbee2mqtt's and
# the HomeKit bridge's.
python3 "$root/scripts/hub-symbol-order.py" "$profiled" "$work"/{second-start,first-start,zigbee2mqtt,bridge}.callgrind \
    >"$root/scripts/hub/symbol-order.txt"
log "wrote scripts/hub/symbol-order.txt (make hub links with it)"
