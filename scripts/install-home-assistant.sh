#!/usr/bin/env bash
# Creates .build/ha-venv with a Python 3.13 and installs scripts/home-assistant-requirements.txt
# (Home Assistant 2025.4) into it, for the test that runs a real Home Assistant against the gateway.
# Quiet when the venv already holds that exact requirements file; installs again when it changed.
#
# Home Assistant 2025.4 needs Python 3.13: the first of `python3.13` on PATH, pyenv's 3.13
# versions, or Debian's python3.13 package (installed when apt has one) is used.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
venv=$root/.build/ha-venv
requirements=$root/scripts/home-assistant-requirements.txt
installed=$venv/installed-requirements.txt

find_python() {
    local candidate
    for candidate in python3.13 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.13*/bin/python3 /usr/bin/python3.13; do
        if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys, venv, ensurepip; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

if [[ -d $venv ]] && ! "$venv/bin/python" -c 'import sys; assert sys.version_info[:2] == (3, 13)' 2>/dev/null; then
    echo "install-home-assistant: $venv is broken or not Python 3.13; making it anew"
    rm -rf "$venv"
fi
if [[ ! -d $venv ]]; then
    if ! python=$(find_python); then
        if apt-cache show python3.13 >/dev/null 2>&1; then
            source "$(dirname "$0")/apt-install.sh"
            apt_install install-home-assistant python3.13 python3.13-venv
        fi
        python=$(find_python) || {
            echo "install-home-assistant: Home Assistant 2025.4 needs Python 3.13, and none was found (python3.13 on PATH, pyenv's 3.13, or Debian's python3.13)." >&2
            if [[ ${HOMEGATE_SKIP_HOME_ASSISTANT:-} == 1 ]]; then
                echo "install-home-assistant: HOMEGATE_SKIP_HOME_ASSISTANT=1: going on without it; its test is skipped with a warning" >&2
                exit 0
            fi
            echo "install-home-assistant: install a Python 3.13, or run with HOMEGATE_SKIP_HOME_ASSISTANT=1 to skip the Home Assistant test" >&2
            exit 1
        }
    fi
    echo "install-home-assistant: creating $venv with $python"
    "$python" -m venv "$venv"
fi

if ! cmp -s "$requirements" "$installed"; then
    echo "install-home-assistant: installing scripts/home-assistant-requirements.txt into .build/ha-venv (a few minutes the first time)"
    rm -f "$installed"
    PIP_NO_INPUT=1 "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
    cp "$requirements" "$installed"
fi
