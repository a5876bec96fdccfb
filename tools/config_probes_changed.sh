#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# config_probes_changed.sh BUILD_DIR: exits 0, naming the file, when a file
# that configure looked for in BUILD_DIR's last run (config.probes: "yes
# PATH" or "no PATH" a line) has appeared or gone since, so that what
# configure would find has changed (EPICS installed after the build was
# configured, say); exits 1 when nothing changed or there is no record.
probes=$1/config.probes
[ -r "$probes" ] || exit 1
while read -r found path; do
    if [ -e "$path" ]; then now=yes; else now=no; fi
    if [ "$now" != "$found" ]; then
        case $now in
        yes) echo "$path has appeared since $1 was configured" ;;
        no) echo "$path has gone since $1 was configured" ;;
        esac
        exit 0
    fi
done <"$probes"
exit 1
