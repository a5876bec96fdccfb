#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# debian_packages.sh: install_debian_packages (tools/debian_packages.sh,
# what quickstart and the stack's builder install with) asks apt only for
# what is missing, waits while another apt holds the lists' lock and says
# so, hands the time left to apt-get install as DPkg::Lock::Timeout, and
# fails once the lock outlasts DEBIAN_LOCK_TIMEOUT. apt-get, dpkg-query
# and id are stand-ins on PATH that log their calls: nothing is installed.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/../tools/debian_packages.sh"
bin=$work/bin
mkdir "$bin"
# dpkg-query: "installed" for the packages named in $work/installed.
cat >"$bin/dpkg-query" <<EOF
#!/bin/sh
for last; do :; done
grep -qx "\$last" "$work/installed" && printf 'install ok installed'
exit 0
EOF
# apt-get: logs its arguments; update fails for as many calls as
# $work/locked holds (one line a call), as apt does on a held lock.
cat >"$bin/apt-get" <<EOF
#!/bin/sh
echo "\$*" >>"$work/apt.log"
case " \$* " in
*" update "*)
    if [ -s "$work/locked" ]; then
        sed -i 1d "$work/locked"
        echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 1 (apt-get)"
        exit 100
    fi ;;
esac
EOF
printf '#!/bin/sh\necho 0\n' >"$bin/id"
chmod +x "$bin"/*
PATH=$bin:$PATH
# sleep: the test does not wait for the 5 s between tries.
sleep() { :; }

printf 'a\nb\n' >"$work/installed"
: >"$work/locked"
install_debian_packages a b 2>"$work/said" || fail "nothing to install failed"
[ ! -e "$work/apt.log" ] || fail "apt-get ran with everything installed: $(cat "$work/apt.log")"

# Two tries of update find the lock held; the third goes through.
printf 'held\nheld\n' >"$work/locked"
install_debian_packages a c d 2>"$work/said" || fail "failed: $(cat "$work/said")"
[ "$(grep -c '^update' "$work/apt.log")" = 3 ] || fail "update was not tried again: $(cat "$work/apt.log")"
grep -q "^-o DPkg::Lock::Timeout=[0-9][0-9]* install -y -qq c d$" "$work/apt.log" ||
    fail "install was not asked with the lock's timeout, for c and d only: $(cat "$work/apt.log")"
grep -q "installing Debian packages: c d (waiting up to 600 s for apt's lock" "$work/said" &&
    grep -q "another apt holds its lock: waiting" "$work/said" ||
    fail "the wait was not said: $(cat "$work/said")"

# A lock held past DEBIAN_LOCK_TIMEOUT: apt's own message, and a failure.
rm "$work/apt.log"
seq 1000 >"$work/locked"
date() { echo 0; }
DEBIAN_LOCK_TIMEOUT=0 install_debian_packages c 2>"$work/said" &&
    fail "a lock held past the deadline did not fail"
unset -f date
[ "$(cat "$work/apt.log")" = "update -qq" ] || fail "apt-get ran past the deadline: $(cat "$work/apt.log")"
grep -q "Could not get lock" "$work/said" || fail "apt's message was not passed on: $(cat "$work/said")"
echo "install_debian_packages: only the missing, waits for the lock and says so, gives up at the deadline"
