# Sourced by the install scripts: apt_install NAME [--no-install-recommends] PACKAGE... installs the
# packages that are not installed yet (apt-get update first), as root or through sudo, and does
# nothing when all are there. NAME prefixes its messages.
apt_install() {
    local name=$1
    shift
    local options=()
    if [[ ${1:-} == --no-install-recommends ]]; then
        options+=("$1")
        shift
    fi
    local missing=() package
    for package in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
            missing+=("$package")
        fi
    done
    ((${#missing[@]})) || return 0
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || { echo "$name: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    echo "$name: installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${options[@]}" "${missing[@]}"
}
