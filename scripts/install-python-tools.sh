#!/usr/bin/env bash
# Creates .build/venv (the project's own Python, so nothing is installed into the system's or the
# user's site-packages) and installs scripts/python-requirements.txt into it. Quiet and quick when
# the venv already holds that exact requirements file; installs again when the file has changed.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.build/venv
requirements=$root/scripts/python-requirements.txt
# The copy of the requirements file last installed in full: compared to know when to install again.
installed=$venv/installed-requirements.txt

# Debian's python3 leaves venv's ensurepip to the python3-venv package; install it when missing.
if ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; then
    source "$(dirname "$0")/apt-install.sh"
    apt_install install-python-tools python3 python3-venv
fi

# A venv whose python no longer runs (its interpreter was upgraded or removed) is made anew.
if [[ -d $venv ]] && ! "$venv/bin/python" -c '' 2>/dev/null; then
    echo "install-python-tools: $venv is broken; making it anew"
    rm -rf "$venv"
fi
if [[ ! -d $venv ]]; then
    echo "install-python-tools: creating $venv"
    python3 -m venv "$venv"
fi

if ! cmp -s "$requirements" "$installed"; then
    echo "install-python-tools: installing scripts/python-requirements.txt into .build/venv"
    rm -f "$installed"
    PIP_NO_INPUT=1 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    # Only after a full install: an interrupted one is tried again next time.
    cp "$requirements" "$installed"
fi
