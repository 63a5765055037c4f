#!/usr/bin/env bash
# Installs what homegate needs on Debian (and Raspberry Pi OS): the mosquitto broker and clients,
# the C libraries it links (libmosquitto, SQLite, Avahi's client for HomeKit discovery, OpenSSL's libcrypto for
# HomeKit's SRP), openssl for the TLS tests, gcc for the benchmark's C programs and sqlite3 for its timers. Does
# nothing when all are there already.
set -euo pipefail

source "$(dirname "$0")/apt-install.sh"
apt_install install-deps mosquitto mosquitto-clients libmosquitto-dev libsqlite3-dev sqlite3 libavahi-client-dev libqrencode-dev openssl libssl-dev pkg-config gcc libc6-dev

if ! command -v swift >/dev/null; then
    echo "install-deps: 'swift' is not on PATH; install Swift 6.2 or later from swift.org and add its usr/bin to PATH" >&2
    exit 1
fi
