#!/usr/bin/env bash
# Installs what the HAP driver's mDNS test needs (scripts/mdns-test.sh): an avahi-daemon and
# avahi-publish of its own, a D-Bus daemon, and iproute2 for the private network namespace. Only for
# `make test`; the gateway itself needs only libavahi-client (scripts/install-deps.sh).
set -euo pipefail

source "$(dirname "$0")/apt-install.sh"
apt_install install-mdns-tools --no-install-recommends avahi-daemon avahi-utils dbus iproute2 util-linux
