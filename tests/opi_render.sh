# SPDX-License-Identifier: BSD-3-Clause
# opi_render.sh: renders screens against a live IOC, sourced by the IOC
# tests after ioc_common.sh. find_renderers finds MEDM and caQtDM (and
# says which are missing); render_screens NAME MACROS [NAME MACROS ...]
# opens opi/NAME.adl in MEDM and opi/NAME.ui in caQtDM, each on an X
# server of its own, keeps the screenshots as
# $builddir/tests/NAME_medm.png and NAME_caqtdm.png, and fails when a
# screenshot is blank or caQtDM could not build a widget or an include.
# A screenshot is taken once the tool shows the screen's window (xwininfo).
# render_path (":"-separated folders) adds to both display paths.

render_pids="" caqtdm_pids=""
# render_stop: the X servers and tools still running (for EXIT traps).
render_stop() { kill $render_pids $caqtdm_pids 2>/dev/null || true; }

# find_renderers: sets medm and caqtdm (empty when absent); false when
# nothing can render here.
find_renderers() {
    medm=$(command -v medm || true)
    [ -n "$medm" ] || [ ! -x /opt/epics/bin/medm ] || medm=/opt/epics/bin/medm
    # caQtDM: on PATH, or built under /opt/caqtdm with its environment
    # (CAQTDM_ENV names another run_env.sh).
    caqtdm_env=${CAQTDM_ENV:-/opt/caqtdm/run_env.sh}
    caqtdm=$(command -v caQtDM || true)
    [ -n "$caqtdm" ] || [ ! -r "$caqtdm_env" ] ||
        caqtdm=$(. "$caqtdm_env" && command -v caQtDM || true)
    if ! command -v Xvfb >/dev/null || ! command -v import >/dev/null ||
        ! command -v xwininfo >/dev/null; then
        echo "not rendered: Xvfb, ImageMagick's import and xwininfo (x11-utils) are needed; the files are checked"
        return 1
    fi
    [ -n "$medm" ] || echo "not rendered: no MEDM (medm); the .adl files are checked"
    [ -n "$caqtdm" ] || echo "not rendered: no caQtDM (caQtDM, or $caqtdm_env); the .ui files are checked"
    [ -n "$medm$caqtdm" ]
}

# render_xserver NAME: an X server on a free display (-displayfd), its
# number in $work/NAME.display, its pid added to render_pids.
render_xserver() {
    Xvfb -displayfd 1 -screen 0 1600x1200x24 >"$work/$1.display" 2>"$work/$1.xvfb.log" &
    render_pids="$render_pids $!"
    poll test -s "$work/$1.display" || fail "Xvfb did not start: $(cat "$work/$1.xvfb.log")"
}

# window_state DISPLAY TITLE: the map state (IsViewable, IsUnMapped, or
# nothing when there is none) of the window TITLE on DISPLAY.
window_state() {
    DISPLAY=:$1 xwininfo -name "$2" 2>/dev/null | sed -n 's/^ *Map State: //p'
}
# on_screen TOOL DISPLAY FILE: TOOL's window of FILE is shown on DISPLAY,
# and MEDM's own splash window ("Version"), shown for about 12 s from its
# start, is gone.
on_screen() {
    [ "$(window_state "$2" "$3")" = IsViewable ] || return 1
    [ "$1" != medm ] || [ "$(window_state "$2" Version)" = IsUnMapped ]
}

render_screens() {
    top_opi=$(cd "$(dirname "$0")/../opi" && pwd)
    shown=""
    while [ $# -gt 0 ]; do
        if [ -n "$medm" ]; then
            render_xserver "$1_medm"
            # MEDM's widgetDM_* font names, where its build gives them
            # (tools/deps/build.sh: a fonts.alias onto Debian's fonts).
            [ -z "${MEDM_FONT_PATH:-}" ] ||
                DISPLAY=:$(cat "$work/$1_medm.display") xset +fp "$MEDM_FONT_PATH" ||
                fail "xset +fp $MEDM_FONT_PATH failed"
            EPICS_DISPLAY_PATH="$top_opi:$ADCORE_OP_ADL${render_path:+:$render_path}" \
                DISPLAY=:$(cat "$work/$1_medm.display") \
                "$medm" -x -macro "$2" "$top_opi/$1.adl" >"$work/$1_medm.log" 2>&1 &
            render_pids="$render_pids $!"
        fi
        if [ -n "$caqtdm" ]; then
            # The include path: ours, ADCore's NDPluginBase.ui, and
            # caQtDM's own tests folder, which holds its stylesheet. The
            # interpolated image is 16 MB.
            render_xserver "$1_caqtdm"
            (
                [ ! -r "$caqtdm_env" ] || . "$caqtdm_env"
                CAQTDM_DISPLAY_PATH="$top_opi:$(dirname "$ADCORE_OP_ADL")/ui/autoconvert:$(dirname "$(dirname "$caqtdm")")/caQtDM_Tests${render_path:+:$render_path}" \
                    EPICS_CA_MAX_ARRAY_BYTES=20000000 DISPLAY=:$(cat "$work/$1_caqtdm.display") \
                    exec "$caqtdm" -noMsg -macro "$2" "$top_opi/$1.ui"
            ) >"$work/$1_caqtdm.log" 2>&1 &
            caqtdm_pids="$caqtdm_pids $!"
        fi
        shown="$shown $1"
        shift 2
    done
    mkdir -p "$builddir/tests"
    for screen in $shown; do
        for tool in medm caqtdm; do
            [ -s "$work/${screen}_$tool.display" ] || continue
            file=$screen.adl
            [ $tool = medm ] || file=$screen.ui
            poll on_screen $tool "$(cat "$work/${screen}_$tool.display")" "$file" ||
                fail "$tool did not show $file: $(cat "$work/${screen}_$tool.log")"
            shot=$builddir/tests/${screen}_$tool.png
            DISPLAY=:$(cat "$work/${screen}_$tool.display") import -window root "$shot" ||
                fail "no screenshot of $screen in $tool"
            colours=$(convert "$shot" -format %k info:)
            [ "$colours" -gt 8 ] ||
                fail "the $tool screenshot of $screen has only $colours colours: $(cat "$work/${screen}_$tool.log")"
            echo "ok: $tool rendered $screen against the live IOC: $shot ($colours colours)"
        done
    done
    # caQtDM ends on TERM (a KILL if it does not), and says what it could
    # not build; MEDM and the X servers go with a TERM.
    for p in $caqtdm_pids; do
        kill -TERM "$p"
        for _ in $(seq 25); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.2
        done
        kill -KILL "$p" 2>/dev/null || true
    done
    kill $render_pids 2>/dev/null || true
    render_pids="" caqtdm_pids=""
    for screen in $shown; do
        [ ! -e "$work/${screen}_caqtdm.log" ] ||
            ! grep -E "unable to create a widget of the class|could not load include file" \
                "$work/${screen}_caqtdm.log" ||
            fail "caQtDM could not build all of $screen.ui"
    done
}
