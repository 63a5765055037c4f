#!/usr/bin/env bash
# Installs what homegate needs on Debian (and Raspberry Pi OS): the mosquitto broker and clients,
# the C libraries it links, openssl for the TLS tests, and gcc for the benchmark's C programs. Does
# nothing when all are there already.
set -euo pipefail

packages=(mosquitto mosquitto-clients libmosquitto-dev libsqlite3-dev openssl pkg-config gcc libc6-dev)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]})); then
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "install-deps: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}"
fi

if ! command -v swift >/dev/null; then
    echo "install-deps: 'swift' is not on PATH; install Swift 6.2 or later from swift.org and add its usr/bin to PATH" >&2
    exit 1
fi
