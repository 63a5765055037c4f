# Sourced by the mDNS tests (scripts/mdns-test.sh, scripts/homekit-mdns-test.sh).
#
# enter_mdns_namespace NAME "$0" ARGS...: unless already inside, re-runs the calling script in a
# private network and mount namespace (`unshare --net --mount`, root) with `--inside` before ARGS.
# start_mdns_daemons NAME WORK [INTERFACES]: inside it, brings loopback up with multicast and starts a
# D-Bus system bus and an avahi-daemon of their own on INTERFACES (avahi's allow-interfaces; lo when
# not given), with sockets on tmpfs mounts private to the namespace, stopped when the script exits;
# returns once the daemon serves. No packet leaves the namespace.

enter_mdns_namespace() {
    local name=$1 script=$2
    shift 2
    [[ $(id -u) -eq 0 ]] || { echo "$name: needs root for a network namespace (CI runs as root)" >&2; exit 2; }
    for tool in unshare avahi-daemon avahi-publish avahi-browse dbus-daemon ip; do
        command -v "$tool" >/dev/null || { echo "$name: $tool is missing: run scripts/install-mdns-tools.sh" >&2; exit 2; }
    done
    exec unshare --net --mount --fork "$script" --inside "$@"
}

mdns_pids=()
stop_mdns_daemons() { kill "${mdns_pids[@]}" 2>/dev/null || true; }

start_mdns_daemons() {
    local name=$1 work=$2 interfaces=${3:-lo}
    mkdir -p "$work"
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
    cat >"$work/avahi.conf" <<CONF
[server]
use-ipv4=yes
use-ipv6=no
allow-interfaces=$interfaces
enable-dbus=yes
ratelimit-interval-usec=0
[wide-area]
enable-wide-area=no
[publish]
publish-hinfo=no
publish-workstation=no
CONF
    trap stop_mdns_daemons EXIT
    dbus-daemon --config-file="$work/bus.conf" --nofork --nopidfile &
    mdns_pids+=($!)
    until [[ -S /run/dbus/system_bus_socket ]]; do sleep 0.05; done
    avahi-daemon -f "$work/avahi.conf" --no-drop-root --no-chroot --no-rlimits >"$work/avahi.log" 2>&1 &
    mdns_pids+=($!)
    # avahi-publish gives up at once when the daemon is not serving yet, so wait until it says it is
    # (on a loaded machine that can take seconds).
    local deadline=$((SECONDS + 60))
    until grep -q "Server startup complete" "$work/avahi.log"; do
        if ((SECONDS > deadline)); then
            echo "$name: avahi-daemon did not start:" >&2
            cat "$work/avahi.log" >&2
            exit 1
        fi
        sleep 0.05
    done
}
