# SPDX-License-Identifier: BSD-3-Clause
"""clusterfind-batch: a whole beamtime reprocessed on a Slurm cluster.

    clusterfind-batch submit RUNS -o OUT [--gpu] [--partition P]
                      [--account A] [--time T] [--sbatch-option OPT]...
                      [--clusterfind PATH] [--keep-clusters]
                      [-- CLUSTERFIND_SETTINGS...]
    clusterfind-batch status OUT
    clusterfind-batch reduce OUT     (the dependent job; also by hand)
    clusterfind-batch task OUT INDEX (what each array task runs)

RUNS lists the runs, one a line: NAME DARK_MASTER DATA_MASTER (paths
relative to the file; # starts a comment). submit sends one Slurm job
array task per run not yet finished, each running clusterfind with the
settings into OUT/runs/NAME/, and a reduce job after the array that sums
the finished runs' spectra, hit maps and images into OUT/total/ with a
manifest, and fits the summed spectrum's line as clusterfind fits a
run's. Submitting again skips the finished runs: a failed run is
resubmitted alone. Needs numpy, and libclustercore for the fit
(clusterfind does the rest)."""
import argparse
import datetime
import json
import os
import re
import shlex
import socket
import subprocess
import sys

import numpy

from . import __version__, outputs

__all__ = ["main", "read_runs", "reduce"]

# Options the batch sets itself, one file per run; the rest pass through.
OWN_OPTIONS = {"--pedestal", "--data", "--output", "--spectrum", "--hitmap", "--noise",
               "--counts", "--image", "--photons", "--eta-calibrate", "--simulate"}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
FINISHED = (0, 3)  # clusterfind's success, and success on damaged input


class BatchError(Exception):
    """Something the user must fix; the message says what."""


def read_runs(path):
    """[(name, dark master, data master)] of a RUNS file, paths absolute."""
    base = os.path.dirname(os.path.abspath(path))
    runs, names = [], set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            if len(fields) != 3:
                raise BatchError("%s:%d: give NAME DARK_MASTER DATA_MASTER" % (path, number))
            name, dark, data = fields
            if not NAME.match(name) or name in names:
                raise BatchError("%s:%d: run name %r is %s" % (
                    path, number, name, "used twice" if name in names
                    else "not letters, digits, '.', '_' and '-'"))
            names.add(name)
            runs.append((name,) + tuple(os.path.join(base, p) for p in (dark, data)))
    if not runs:
        raise BatchError("%s lists no runs" % path)
    return runs


def _setting_value(settings, option):
    """The value of an option among clusterfind settings, or None."""
    value = None
    for i, word in enumerate(settings):
        if word == option and i + 1 < len(settings):
            value = settings[i + 1]
        elif word.startswith(option + "="):
            value = word.split("=", 1)[1]
    return value


def run_files(beamtime):
    """The output files of each run for these settings, by kind."""
    settings = beamtime["settings"]
    files = {kind: outputs.RUN_FILES[kind] for kind in ("spectrum", "hitmap", "noise")}
    if _setting_value(settings, "--energy-window") is not None:
        files["counts"] = outputs.RUN_FILES["counts"]
    if _setting_value(settings, "--eta-map") is not None:
        files["image"] = outputs.RUN_FILES["image"]
    if beamtime.get("keep_clusters"):
        files["clusters"] = "clusters.clust"
    return files


def _write_json(path, value):
    outputs.write_atomically(path, lambda f: f.write(
        (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()))


def _read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None


def _beamtime(out):
    beamtime = _read_json(os.path.join(out, "beamtime.json"))
    if beamtime is None:
        raise BatchError("%s is not a beamtime directory (no beamtime.json)" % out)
    return beamtime


def run_state(out, name):
    """(state, status): state "finished", "damaged", "failed" or "not
    run"; status the run's status.json or None."""
    status = _read_json(os.path.join(out, "runs", name, "status.json"))
    if status is None:
        return "not run", None
    if status["exit"] == 0:
        return "finished", status
    return ("damaged" if status["exit"] == 3 else "failed"), status


# ---- submit ---------------------------------------------------------------

def _ranges(indices):
    """0,1,2,5 -> "0-2,5": Slurm's --array list."""
    parts, start = [], None
    for i, index in enumerate(indices):
        if start is None:
            start = index
        if i + 1 == len(indices) or indices[i + 1] != index + 1:
            parts.append(str(start) if start == index else "%d-%d" % (start, index))
            start = None
    return ",".join(parts)


PATH_OPTIONS = ("--eta-map", "--mask")  # settings that name a file
# Settings of raw runs only, which clusterfind refuses beside --simulate,
# and the values each takes.
RAW_RUN_OPTIONS = {"--chip": ("moench03", "moench04")}


def _simulated_settings(settings):
    """The settings without those of raw runs only, checked here."""
    out, i = [], 0
    while i < len(settings):
        option, equals, value = settings[i].partition("=")
        if option not in RAW_RUN_OPTIONS:
            out.append(settings[i])
            i += 1
            continue
        if not equals:
            value = settings[i + 1] if i + 1 < len(settings) else ""
            i += 1
        i += 1
        if value not in RAW_RUN_OPTIONS[option]:
            raise BatchError("clusterfind refuses the settings: %s %r: give %s"
                             % (option, value, " or ".join(RAW_RUN_OPTIONS[option])))
    return out


def _absolute_paths(settings):
    """The settings with the files they name made absolute: the tasks run
    in the beamtime's directory."""
    out = list(settings)
    for i, word in enumerate(out):
        option, _, value = word.partition("=")
        if option in PATH_OPTIONS and value:
            out[i] = "%s=%s" % (option, os.path.abspath(value))
        elif word in PATH_OPTIONS and i + 1 < len(out):
            out[i + 1] = os.path.abspath(out[i + 1])
    return out


def _check_settings(clusterfind, settings):
    """Runs clusterfind's own parsing on the settings (a 1-frame simulated
    run), so that a typo fails here and not in every task."""
    bad = [word for word in settings if word.split("=", 1)[0] in OWN_OPTIONS]
    if bad:
        raise BatchError("%s: the batch sets these itself, one file per run" % ", ".join(bad))
    simulated = _simulated_settings(settings)
    try:
        done = subprocess.run([clusterfind] + simulated + ["--simulate", "1", "--flux", "0",
                                                          "--pedestal-frames", "2"],
                              capture_output=True, text=True)
    except OSError as error:
        raise BatchError("cannot run clusterfind (%s): give --clusterfind PATH" % error)
    if done.returncode == 2:
        raise BatchError("clusterfind refuses the settings: %s" % done.stderr.strip())


def _sbatch(arguments):
    try:
        done = subprocess.run(["sbatch", "--parsable"] + arguments, capture_output=True,
                              text=True)
    except OSError as error:
        raise BatchError("cannot run sbatch (%s): is this a Slurm login node?" % error)
    if done.returncode != 0:
        raise BatchError("sbatch refused the job: %s" % done.stderr.strip())
    return done.stdout.strip().split(";")[0]


def _still_queued(job_ids):
    """Those of job_ids that Slurm still runs or holds."""
    if not job_ids:
        return []
    done = subprocess.run(["squeue", "-h", "-o", "%F", "-j", ",".join(job_ids)],
                          capture_output=True, text=True)
    return sorted(set(done.stdout.split()) & set(job_ids))


def _script(out, name, command):
    """A job script running this package's command on the same Python."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(out, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write("#!/bin/sh\n# Written by clusterfind-batch.\n"
                "PYTHONPATH=%s${PYTHONPATH:+:$PYTHONPATH} exec %s -m clustercore.batch %s\n"
                % (shlex.quote(package_parent), shlex.quote(sys.executable), command))
    os.chmod(path, 0o755)
    return path


def submit(args):
    out = os.path.abspath(args.output)
    runs = read_runs(args.runs)
    settings = _absolute_paths(args.settings)
    clusterfind = os.path.abspath(args.clusterfind) if os.sep in args.clusterfind \
        else args.clusterfind
    os.makedirs(os.path.join(out, "logs"), exist_ok=True)
    beamtime = _read_json(os.path.join(out, "beamtime.json"))
    if beamtime is not None:
        if beamtime["settings"] != settings or beamtime["keep_clusters"] != args.keep_clusters:
            raise BatchError("%s was made with other settings (%s): give another -o"
                             % (out, " ".join(beamtime["settings"]) or "none"))
        known = [tuple(run) for run in beamtime["runs"]]
        if runs[:len(known)] != known:
            raise BatchError("%s holds other runs than %s (runs may only be added at the end)"
                             % (out, args.runs))
        queued = _still_queued(beamtime.get("jobs", []))
        if queued:
            raise BatchError("jobs %s of %s are still queued or running: wait, or scancel them"
                             % (", ".join(queued), out))
    _check_settings(clusterfind, settings)
    beamtime = {"runs": runs, "settings": settings, "clusterfind": clusterfind,
                "keep_clusters": args.keep_clusters,
                "jobs": beamtime.get("jobs", []) if beamtime else []}
    todo = [i for i, run in enumerate(runs) if run_state(out, run[0])[0] not in
            ("finished", "damaged")]
    common = ["--chdir", out]
    for option, value in (("--partition", args.partition), ("--account", args.account),
                          ("--time", args.time)):
        if value:
            common.append("%s=%s" % (option, value))
    common += args.sbatch_option
    task = _script(out, "task.sh", "task %s \"$SLURM_ARRAY_TASK_ID\"" % shlex.quote(out))
    reducer = _script(out, "reduce.sh", "reduce %s" % shlex.quote(out))
    dependency = []
    if todo:
        array = _sbatch(common + ["--array=" + _ranges(todo), "--job-name=clusterfind",
                                  "--output=" + os.path.join(out, "logs", "%A_%a.out")]
                        + (["--gres=gpu:1"] if args.gpu else []) + [task])
        beamtime["jobs"].append(array)
        dependency = ["--dependency=afterany:" + array]
        print("submitted job array %s: %d of %d runs (%s)" % (
            array, len(todo), len(runs), ", ".join(runs[i][0] for i in todo)))
    else:
        print("all %d runs are finished: only the totals are made again" % len(runs))
    reduce_job = _sbatch(common + dependency + [
        "--job-name=clusterfind-reduce",
        "--output=" + os.path.join(out, "logs", "reduce_%j.out"), reducer])
    beamtime["jobs"].append(reduce_job)
    _write_json(os.path.join(out, "beamtime.json"), beamtime)
    print("submitted reduce job %s: the totals go to %s" % (reduce_job, os.path.join(out, "total")))
    return 0


# ---- task -------------------------------------------------------------------

SUMMARY = {"frames": re.compile(r"^frames: +(\d+) in ([0-9.]+) s", re.M),
           "clusters": re.compile(r"^clusters: +(\d+) \([0-9.]+ per frame\), (\d+) dropped", re.M)}


def task(out, index):
    """One run: clusterfind into OUT/runs/NAME/, then its status.json,
    written last. The task fails (exit 1) when clusterfind fails."""
    beamtime = _beamtime(out)
    name, dark, data = beamtime["runs"][index]
    where = os.path.join(out, "runs", name)
    os.makedirs(where, exist_ok=True)
    status_path = os.path.join(where, "status.json")
    if os.path.exists(status_path):
        os.unlink(status_path)  # the run is being made again
    command = [beamtime["clusterfind"], "--pedestal", dark, "--data", data]
    command += beamtime["settings"]
    for kind, file in run_files(beamtime).items():
        option = {"clusters": "--output"}.get(kind, "--" + kind)
        command += [option, os.path.join(where, file)]
    with open(os.path.join(where, "summary.txt"), "w") as summary, \
            open(os.path.join(where, "log.txt"), "w") as log:
        code = subprocess.run(command, stdout=summary, stderr=log).returncode
    text = open(os.path.join(where, "summary.txt"), encoding="utf-8").read()
    status = {"exit": code, "command": command, "host": socket.gethostname(),
              "job": "%s_%s" % (os.environ.get("SLURM_ARRAY_JOB_ID", "-"),
                                os.environ.get("SLURM_ARRAY_TASK_ID", index)),
              "finished": datetime.datetime.now().astimezone().isoformat(timespec="seconds")}
    frames, clusters = SUMMARY["frames"].search(text), SUMMARY["clusters"].search(text)
    if code in FINISHED and frames and clusters:
        status.update(frames=int(frames.group(1)), seconds=float(frames.group(2)),
                      clusters=int(clusters.group(1)), dropped=int(clusters.group(2)))
    elif code in FINISHED:
        status["exit"] = 1  # a summary that cannot be read is no success
    _write_json(status_path, status)
    print("%s: clusterfind exited %d" % (name, code))
    return 0 if status["exit"] in FINISHED else 1


# ---- reduce -----------------------------------------------------------------

def _version(clusterfind):
    try:
        return subprocess.run([clusterfind, "--version"], capture_output=True,
                              text=True).stdout.strip()
    except OSError as error:
        return "unknown (%s)" % error


def _fit_line(spectrum, settings):
    """The summed spectrum's line, fitted as clusterfind fits a run's (the
    bins whose centres lie in --peak-range, else around the highest bin):
    {"peak": {name: value}} in the spectrum file's '# peak:' names, or
    {"not_fitted": why}."""
    from . import analysis  # libclustercore: the fit is the library's own

    low, high = 0.0, 0.0
    given = _setting_value(settings, "--peak-range")
    if given is not None:
        low, high = (float(edge) for edge in given.split(":"))
    centres = 0.5 * (spectrum.edges[:-1] + spectrum.edges[1:])
    try:
        peak = analysis.fit_peak(spectrum.counts, centres, low, high)
    except ImportError as error:  # no libclustercore: it says where it looked
        return {"not_fitted": str(error)}
    if peak is None:
        return {"not_fitted": "no line converged in the range fitted"}
    return {"peak": peak._asdict()}


def reduce(out):
    """Sums the finished runs into OUT/total/ and writes its manifest.
    Exit 0 when every run finished, 3 when the totals lack some."""
    beamtime = _beamtime(out)
    files = run_files(beamtime)
    total_dir = os.path.join(out, "total")
    os.makedirs(total_dir, exist_ok=True)
    listed, spectra, sums = [], [], {}
    for name, dark, data in beamtime["runs"]:
        state, status = run_state(out, name)
        entry = {"name": name, "dark": dark, "data": data, "state": state}
        if status is not None:
            entry.update({key: status[key] for key in ("exit", "job", "host", "finished",
                                                         "frames", "clusters", "dropped")
                          if key in status})
        if state in ("finished", "damaged"):
            where = os.path.join(out, "runs", name)
            spectra.append(outputs.read_spectrum(os.path.join(where, files["spectrum"])))
            for kind in ("hitmap", "counts", "image"):
                if kind in files:
                    counts = outputs.read_map(os.path.join(where, files[kind]), "u")
                    if kind in sums and sums[kind].shape != counts.shape:
                        raise BatchError("%s: its %s is %s, the others' %s" % (
                            name, kind, counts.shape, sums[kind].shape))
                    sums[kind] = sums.get(kind, 0) + counts.astype(numpy.uint64)
        listed.append(entry)
    done = [e for e in listed if e["state"] in ("finished", "damaged")]
    line = None
    if spectra:
        summed = outputs.sum_spectra(spectra)
        line = _fit_line(summed, beamtime["settings"])
        outputs.write_spectrum(os.path.join(total_dir, outputs.RUN_FILES["spectrum"]),
                               summed._replace(peak=line.get("peak")))
    for kind, counts in sums.items():
        outputs.save_npy(os.path.join(total_dir, outputs.RUN_FILES[kind]), counts)
    manifest = {
        "beamtime": out, "settings": beamtime["settings"],
        "made": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "versions": {"clusterfind": _version(beamtime["clusterfind"]),
                     "clustercore-batch": __version__},
        "runs": listed,
        "totals": {"runs": len(done), "frames": sum(e["frames"] for e in done),
                   "clusters": sum(e["clusters"] for e in done),
                   "dropped": sum(e["dropped"] for e in done),
                   "files": sorted(os.path.basename(p) for p in os.listdir(total_dir)
                                   if p != "manifest.json"),
                   "line": line},
        "failures": [e["name"] for e in listed if e["state"] not in ("finished", "damaged")]}
    _write_json(os.path.join(total_dir, "manifest.json"), manifest)
    print("totals of %d of %d runs in %s" % (len(done), len(listed), total_dir))
    if line is not None:
        print("the summed spectrum's line: %s" % (
            "position %.6g, sigma %.6g" % (line["peak"]["position"], line["peak"]["sigma"])
            if "peak" in line else line["not_fitted"]))
    if manifest["failures"]:
        print("not in the totals: %s (submit again to redo them)"
              % ", ".join(manifest["failures"]))
        return 3
    return 0


def status(out):
    beamtime = _beamtime(out)
    for name, _, _ in beamtime["runs"]:
        state, run = run_state(out, name)
        detail = ""
        if run is not None and "frames" in run:
            detail = ": %d frames, %d clusters" % (run["frames"], run["clusters"])
        elif run is not None:
            detail = ": clusterfind exited %d, see %s" % (
                run["exit"], os.path.join(out, "runs", name, "log.txt"))
        print("%-24s %s%s" % (name, state, detail))
    queued = _still_queued(beamtime.get("jobs", []))
    if queued:
        print("still queued or running: jobs %s" % ", ".join(queued))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="clusterfind-batch", description=__doc__.split(
        "\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("submit", help="submit the runs not yet finished, and the "
                            "totals; clusterfind's settings follow --")
    p.add_argument("runs", help="the RUNS file: NAME DARK_MASTER DATA_MASTER a line")
    p.add_argument("-o", "--output", required=True, help="the beamtime's directory")
    p.add_argument("--gpu", action="store_true", help="one GPU per task (--gres=gpu:1)")
    p.add_argument("--partition")
    p.add_argument("--account")
    p.add_argument("--time", help="each task's time limit, as sbatch takes it")
    p.add_argument("--sbatch-option", action="append", default=[],
                   help="any other sbatch option, for every job (repeatable)")
    p.add_argument("--clusterfind", default="clusterfind", help="the program (default: on PATH)")
    p.add_argument("--keep-clusters", action="store_true",
                   help="also keep each run's clusters (.clust)")
    for name in ("status", "reduce"):
        commands.add_parser(name).add_argument("output")
    p = commands.add_parser("task")
    p.add_argument("output")
    p.add_argument("index", type=int)
    # clusterfind's settings follow "--", untouched by this parser.
    argv = list(sys.argv[1:] if argv is None else argv)
    settings = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[:len(argv) - len(settings) - ("--" in argv)])
    args.settings = settings
    try:
        if args.command == "submit":
            return submit(args)
        if args.command == "task":
            return task(os.path.abspath(args.output), args.index)
        return {"status": status, "reduce": reduce}[args.command](os.path.abspath(args.output))
    except (BatchError, OSError, ValueError) as error:
        print("clusterfind-batch: %s" % error, file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
