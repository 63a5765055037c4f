#!/usr/bin/env bash
# The mDNS test of the HAP driver's discovery (run by Tests/IntegrationTests/HAPDiscoveryTests.swift):
# in a private network and mount namespace (`unshare --net --mount`, root), with only loopback up and
# multicast on it, starts a D-Bus system bus and an avahi-daemon of its own (their sockets on tmpfs
# mounts private to the namespace), runs hap-browse (HAPBrowser printing JSON lines), and checks that
# an accessory published with avahi-publish is found with its TXT record, found again with a new
# configuration number, and removed. No packet leaves the namespace.
#
# usage: scripts/mdns-test.sh HAP_BROWSE_EXECUTABLE WORK_FOLDER
set -euo pipefail

if [[ ${1:-} != --inside ]]; then
    browse=${1:?usage: mdns-test.sh HAP_BROWSE_EXECUTABLE WORK_FOLDER} work=${2:?work folder}
    [[ $(id -u) -eq 0 ]] || { echo "mdns-test: needs root for a network namespace (CI runs as root)" >&2; exit 2; }
    for tool in unshare avahi-daemon avahi-publish dbus-daemon ip; do
        command -v "$tool" >/dev/null || { echo "mdns-test: $tool is missing: run scripts/install-test-tools.sh" >&2; exit 2; }
    done
    exec unshare --net --mount --fork "$0" --inside "$browse" "$work"
fi
browse=$2 work=$3
mkdir -p "$work"
: >"$work/publish.log"
ip link set lo up
ip link set lo multicast on
for folder in /run/dbus /run/avahi-daemon; do
    mkdir -p "$folder"
    mount -t tmpfs tmpfs "$folder"
done
cat >"$work/bus.conf" <<'CONF'
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig><type>system</type><listen>unix:path=/run/dbus/system_bus_socket</listen><auth>EXTERNAL</auth>
<policy context="default"><allow user="*"/><allow own="*"/><allow send_destination="*"/><allow receive_sender="*"/></policy>
</busconfig>
CONF
cat >"$work/avahi.conf" <<'CONF'
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=lo
enable-dbus=yes
ratelimit-interval-usec=0
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
CONF
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; }
trap cleanup EXIT
dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile &
pids+=($!)
until [[ -S /run/dbus/system_bus_socket ]]; do sleep 0.05; done
avahi-daemon -f "$work/avahi.conf" --no-drop-root --no-chroot --no-rlimits >"$work/avahi.log" 2>&1 &
pids+=($!)
# avahi-publish gives up at once when the daemon is not serving yet, so wait until it says it is (on a
# loaded machine that can take seconds).
deadline=$((SECONDS + 60))
until grep -q "Server startup complete" "$work/avahi.log"; do
    if ((SECONDS > deadline)); then
        echo "mdns-test: avahi-daemon did not start:" >&2
        cat "$work/avahi.log" >&2
        exit 1
    fi
    sleep 0.05
done
"$browse" >"$work/browse.jsonl" 2>"$work/browse.log" &
pids+=($!)

# Waits (at most 60 s, a bound for a stalled machine, not a pace) until the browser printed a line
# matching the pattern; prints it.
expect_line() {
    local pattern=$1 deadline=$((SECONDS + 60))
    until grep -E -- "$pattern" "$work/browse.jsonl"; do
        if ((SECONDS > deadline)); then
            echo "mdns-test: no line matching $pattern; the browser printed:" >&2
            cat "$work/browse.jsonl" "$work/browse.log" "$work/avahi.log" "$work/publish.log" >&2
            exit 1
        fi
        sleep 0.05
    done
}

avahi-publish -s "Test Bridge" _hap._tcp 51826 id=11:22:33:44:55:66 c#=2 s#=1 sf=1 ci=2 md=Bridge pv=1.1 >/dev/null 2>>"$work/publish.log" &
publisher=$!
expect_line '"event":"found","name":"Test Bridge","id":"11:22:33:44:55:66","category":2,"pairable":true,"configuration":2,"model":"Bridge","host":"127.0.0.1","port":51826'
# A malformed record (no id) is skipped, not taken.
avahi-publish -s "No Id" _hap._tcp 51827 c#=1 sf=1 >/dev/null 2>>"$work/publish.log" &
pids+=($!)
expect_line '"event":"found".*"configuration":2' >/dev/null
kill "$publisher"
expect_line '"event":"removed","name":"Test Bridge"'
avahi-publish -s "Test Bridge" _hap._tcp 51826 id=11:22:33:44:55:66 c#=3 s#=1 sf=0 ci=2 md=Bridge pv=1.1 >/dev/null 2>>"$work/publish.log" &
pids+=($!)
expect_line '"pairable":false,"configuration":3'
if grep -q '"name":"No Id"' "$work/browse.jsonl"; then
    echo "mdns-test: the record without an id was taken" >&2
    exit 1
fi
grep -q "skipped 'No Id'" "$work/browse.log" || { echo "mdns-test: the record without an id was not reported" >&2; cat "$work/browse.log" >&2; exit 1; }
echo "mdns-test: found, skipped, removed and found again as expected"
