# SPDX-License-Identifier: BSD-3-Clause
# debian_packages.sh: sourced by quickstart and tools/deps/build.sh (POSIX sh).
#
# install_debian_packages PACKAGE...: installs those of PACKAGE not yet
# installed, with apt-get (through sudo when not root). When another apt or
# dpkg holds a lock, it waits for it (DEBIAN_LOCK_TIMEOUT seconds, default
# 600), says so, and fails only when the lock is still held then.

install_debian_packages() {
    debian_missing=""
    for debian_package in "$@"; do
        dpkg-query -W -f='${Status}' "$debian_package" 2>/dev/null |
            grep -q "install ok installed" || debian_missing="$debian_missing $debian_package"
    done
    [ -z "$debian_missing" ] && return 0
    if [ "$(id -u)" -eq 0 ]; then
        debian_sudo=""
    elif command -v sudo >/dev/null 2>&1; then
        debian_sudo="sudo"
    else
        printf 'need root or sudo to install Debian packages:%s\n' "$debian_missing" >&2
        return 1
    fi
    printf 'installing Debian packages:%s (waiting up to %s s for apt'"'"'s lock if another apt holds it)\n' \
        "$debian_missing" "${DEBIAN_LOCK_TIMEOUT:-600}" >&2
    # apt-get update takes the lists' lock, which DPkg::Lock::Timeout does
    # not cover (apt 2.6): it is tried again until the deadline.
    debian_deadline=$(($(date +%s) + ${DEBIAN_LOCK_TIMEOUT:-600}))
    debian_said=no
    until debian_log=$($debian_sudo apt-get update -qq 2>&1); do
        case $debian_log in
        *"Could not get lock"*) [ "$(date +%s)" -lt "$debian_deadline" ] || break ;;
        *) break ;;
        esac
        [ $debian_said = yes ] || printf 'another apt holds its lock: waiting\n' >&2
        debian_said=yes
        sleep 5
    done
    [ -z "$debian_log" ] || printf '%s\n' "$debian_log" >&2
    case $debian_log in *"Could not get lock"*) return 1 ;; esac
    debian_wait=$((debian_deadline - $(date +%s)))
    [ $debian_wait -gt 0 ] || debian_wait=1
    DEBIAN_FRONTEND=noninteractive $debian_sudo apt-get -o DPkg::Lock::Timeout=$debian_wait \
        install -y -qq $debian_missing >/dev/null
}
