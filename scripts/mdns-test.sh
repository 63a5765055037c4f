#!/usr/bin/env bash
# The mDNS test of the HAP driver's discovery (run by Tests/IntegrationTests/HAPDiscoveryTests.swift):
# in a private network namespace with an avahi-daemon of its own (scripts/mdns-namespace.sh), runs
# hap-browse (HAPBrowser printing JSON lines), and checks that
# an accessory published with avahi-publish is found with its TXT record, found again with a new
# configuration number, and removed. No packet leaves the namespace.
#
# usage: scripts/mdns-test.sh HAP_BROWSE_EXECUTABLE WORK_FOLDER
set -euo pipefail

source "$(dirname "$0")/mdns-namespace.sh"
if [[ ${1:-} != --inside ]]; then
    browse=${1:?usage: mdns-test.sh HAP_BROWSE_EXECUTABLE WORK_FOLDER} work=${2:?work folder}
    enter_mdns_namespace mdns-test "$0" "$browse" "$work"
fi
browse=$2 work=$3
start_mdns_daemons mdns-test "$work"
: >"$work/publish.log"
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; stop_mdns_daemons; }
trap cleanup EXIT
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
