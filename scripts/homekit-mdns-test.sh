#!/usr/bin/env bash
# The mDNS test of the HomeKit bridge's advert (run by Tests/IntegrationTests/HomeKitBridgeTests.swift):
# in a private network namespace with an avahi-daemon of its own (scripts/mdns-namespace.sh), runs
# `homegate run` with the demo home and Main House as a HomeKit bridge advertised on lo (no broker:
# the bridge does not need one), and checks with avahi-browse that the `_hap._tcp` record carries
# c#, ff, id, md, pv, s#, sf, ci and sh as HAP asks; that after aiohomekit paired (with the code
# `homegate homekit-code` prints) `sf` says paired; that the record goes when the gateway stops; and
# that without `interfaces` it goes out on an interface with a route (hub0), not on lo or docker0.
#
# usage: scripts/homekit-mdns-test.sh HOMEGATE_EXECUTABLE WORK_FOLDER
set -euo pipefail

source "$(dirname "$0")/mdns-namespace.sh"
if [[ ${1:-} != --inside ]]; then
    homegate=${1:?usage: homekit-mdns-test.sh HOMEGATE_EXECUTABLE WORK_FOLDER} work=${2:?work folder}
    enter_mdns_namespace homekit-mdns-test "$0" "$homegate" "$work"
fi
homegate=$2 work=$3
root=$(cd "$(dirname "$0")/.." && pwd)
# Beside lo, a LAN-like interface with an address (and so a route) and a docker0: the default choice
# of interfaces (the second part) must take the first and leave docker0 and lo alone. Veth pairs,
# whose far ends have no address: this kernel has no dummy interfaces.
ip link add hub0 type veth peer name hub0-far
ip link add docker0 type veth peer name docker0-far
for interface in hub0 hub0-far docker0 docker0-far; do ip link set "$interface" up multicast on; done
ip addr add 10.77.0.1/24 dev hub0
ip addr add 172.17.0.1/16 dev docker0
start_mdns_daemons homekit-mdns-test "$work" lo,hub0,docker0
gateway=
cleanup() { [[ -n $gateway ]] && kill "$gateway" 2>/dev/null; stop_mdns_daemons; }
trap cleanup EXIT

cat >"$work/homegate.yml" <<CONF
mqtt:
  broker: mqtt://127.0.0.1:9
data:
  directory: $work/data
accessories:
  virtual: $root/Config/demo-home.yml
web: null
homekit:
  interfaces: [lo]
  bridges:
    - {home: Main House, account: owner, port: 51830, listen: 127.0.0.1}
CONF
"$homegate" run --config "$work/homegate.yml" >"$work/gateway.log" 2>&1 &
gateway=$!

fail() {
    echo "homekit-mdns-test: $1" >&2
    cat "$work/gateway.log" "$work/avahi.log" >&2
    exit 1
}

# The record as avahi-browse resolves it: its TXT items, one a line. Waits (at most 60 s, a bound
# for a stalled machine, not a pace) until one matches the pattern.
record() { avahi-browse -rpt _hap._tcp 2>/dev/null | grep '^=' | grep -F ';Main\032House;' | head -1; }
expect_record() {
    local pattern=$1 deadline=$((SECONDS + 60)) found
    until found=$(record) && [[ $found =~ $pattern ]]; do
        ((SECONDS < deadline)) || fail "no record matching $pattern; the last: ${found:-none}"
        kill -0 "$gateway" 2>/dev/null || fail "the gateway exited"
        sleep 0.1
    done
    echo "$found"
}

found=$(expect_record '"sf=1"')
for item in '"c#=[0-9]+"' '"ff=0"' '"id=([0-9A-F]{2}:){5}[0-9A-F]{2}"' '"md=Main House"' '"pv=1.1"' '"s#=1"' '"ci=2"' '"sh=[A-Za-z0-9+/]{6}=="'; do
    [[ $found =~ $item ]] || fail "the record has no $item: $found"
done
[[ $found =~ \;127\.0\.0\.1\;51830\; ]] || fail "the record does not point to 127.0.0.1:51830: $found"

# sh is the setup hash of the setup ID (the QR payload's last four characters) and the id.
code_output=$("$homegate" homekit-code --config "$work/homegate.yml" --home "Main House" 2>/dev/null)
code=$(grep -o 'setup code of Main House: [0-9-]*' <<<"$code_output" | awk '{print $NF}')
payload=$(grep -o 'X-HM://[0-9A-Z]*' <<<"$code_output")
id=$(grep -oE '"id=[^"]*"' <<<"$found" | tr -d '"' | cut -d= -f2)
sh=$(grep -oE '"sh=[^"]*"' <<<"$found" | tr -d '"' | cut -d= -f2-)
expected=$(python3 -c 'import base64,hashlib,sys; print(base64.b64encode(hashlib.sha512((sys.argv[1]+sys.argv[2]).encode()).digest()[:4]).decode())' "${payload: -4}" "$id")
[[ $sh == "$expected" ]] || fail "sh is $sh; the setup ID ${payload: -4} and id $id give $expected"

"$root/.build/venv/bin/python" "$root/scripts/homekit-controller.py" --port 51830 --pairing-file "$work/pairing.json" \
    pair "$code" >"$work/pair.log" 2>&1 || { cat "$work/pair.log" >&2; fail "aiohomekit could not pair"; }
expect_record '"sf=0"' >/dev/null

kill -TERM "$gateway"
wait "$gateway" || fail "the gateway did not stop cleanly"
gateway=
deadline=$((SECONDS + 60))
while [[ -n $(record) ]]; do
    ((SECONDS < deadline)) || fail "the record stayed after the gateway stopped"
    sleep 0.1
done

# Without `interfaces`, the record goes out on the interfaces with a route: hub0, not lo or docker0.
sed -i 's/^  interfaces: \[lo\]$//; s/port: 51830, listen: 127.0.0.1/port: 51831/' "$work/homegate.yml"
"$homegate" run --config "$work/homegate.yml" >"$work/gateway-2.log" 2>&1 &
gateway=$!
interfaces() { avahi-browse -rpt _hap._tcp 2>/dev/null | grep '^=' | grep -F ';Main\032House;' | cut -d';' -f2 | sort -u; }
deadline=$((SECONDS + 60))
until [[ $(interfaces) == hub0 ]]; do
    ((SECONDS < deadline)) || fail "the record is on '$(interfaces | tr '\n' ' ')', not on hub0 alone"
    kill -0 "$gateway" 2>/dev/null || fail "the gateway exited"
    sleep 0.1
done
kill -TERM "$gateway"
wait "$gateway" || fail "the gateway did not stop cleanly"
gateway=
echo "homekit-mdns-test: advertised with HAP's TXT record, sf=0 once paired, withdrawn at stop; by default on hub0, not lo or docker0"
