#!/usr/bin/env bash
# Installs what the real-browser tests need on Debian: Debian's own chromium and its matching
# chromedriver (the browser and driver come from the same source package, so their versions always
# agree; nothing is downloaded at test time). Kept apart from install-deps.sh so that `make demo`
# and `make build` do not pull in a browser. Does nothing when both are there already.
set -euo pipefail

packages=(chromium chromium-driver)
missing=()
for package in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done

if ((${#missing[@]})); then
    sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "install-browser: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "install-browser: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    # --no-install-recommends: the recommended extras (a desktop's fonts, sound, upower...) are not
    # needed headless and would double the download.
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Both paths are what scripts/browser_session.py uses.
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
    [[ -x $tool ]] || { echo "install-browser: $tool is missing after the install" >&2; exit 1; }
done
