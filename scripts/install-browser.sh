#!/usr/bin/env bash
# Installs what the real-browser tests need on Debian: Debian's own chromium and its matching
# chromedriver (the browser and driver come from the same source package, so their versions always
# agree; nothing is downloaded at test time). Kept apart from install-deps.sh so that `make demo`
# and `make build` do not pull in a browser. Does nothing when both are there already.
set -euo pipefail

source "$(dirname "$0")/apt-install.sh"
# --no-install-recommends: the recommended extras (a desktop's fonts, sound, upower...) are not
# needed headless and would double the download.
apt_install install-browser --no-install-recommends chromium chromium-driver

# Both paths are what scripts/browser_session.py uses.
for tool in /usr/bin/chromium /usr/bin/chromedriver; do
    [[ -x $tool ]] || { echo "install-browser: $tool is missing after the install" >&2; exit 1; }
done
