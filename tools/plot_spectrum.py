#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""plot_spectrum.py SPECTRUM.csv -o OUT.png [--gain ADU_PER_KEV] [--title T]

Draws a spectrum that clusterfind --spectrum wrote (low,high,count per
bin, then the underflow and overflow lines, and a last '# peak:' line
when clusterfind fitted its line) as a histogram on a log scale, with
the under- and overflow counts in the legend and the fitted line drawn. With --gain,
the Cu K-alpha (8.048 keV) and K-beta (8.905 keV) lines are marked at
gain times their energy. Needs numpy and matplotlib.
"""
import argparse
import sys

import numpy

LINES_KEV = (("Cu Kα", 8.048), ("Cu Kβ", 8.905))


def read_peak(line):
    """The fitted line of a '# peak: key=value ...' comment, as a dict."""
    fields = dict(item.split("=", 1) for item in line[len("# peak:"):].split())
    return {key: float(value) for key, value in fields.items()}


def read_spectrum(path):
    """Bins (low, high, count), the under- and overflow counts, and the
    fitted line (a dict, or None)."""
    low, high, count = [], [], []
    underflow = overflow = 0
    peak = None
    with open(path, encoding="utf-8") as f:
        if f.readline().strip() != "low,high,count":
            raise ValueError("%s: not a clusterfind spectrum (no low,high,count header)" % path)
        for number, line in enumerate(f, 2):
            if line.startswith("# peak:"):
                try:
                    peak = read_peak(line)
                except ValueError:
                    raise ValueError("%s:%d: not a '# peak: key=value' line"
                                     % (path, number)) from None
                continue
            fields = line.strip().split(",")
            if len(fields) != 3:
                raise ValueError("%s:%d: expected low,high,count" % (path, number))
            if fields[0] == "-inf":
                underflow = int(fields[2])
            elif fields[1] == "inf":
                overflow = int(fields[2])
            else:
                low.append(float(fields[0]))
                high.append(float(fields[1]))
                count.append(int(fields[2]))
    if not count:
        raise ValueError("%s: no bins" % path)
    return (numpy.array(low), numpy.array(high), numpy.array(count), underflow,
            overflow, peak)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("spectrum", help="a CSV from clusterfind --spectrum")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--gain", type=float, help="ADU per keV: marks Cu Kα and Kβ")
    parser.add_argument("--title", default="", help="the plot's title")
    args = parser.parse_args()
    try:
        low, high, count, underflow, overflow, peak = read_spectrum(args.spectrum)
    except (OSError, ValueError) as error:
        sys.exit("plot_spectrum.py: %s" % error)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 3.6), dpi=110)
    axes.stairs(count, numpy.append(low, high[-1]), fill=True, color="#4a7ab5",
                label="clusters (%d); below %g ADU: %d, above %g ADU: %d"
                % (count.sum(), low[0], underflow, high[-1], overflow))
    if count.max() > 0:
        axes.set_yscale("log")
        axes.set_ylim(bottom=0.8, top=count.max() * 30)
    if args.gain:
        for (name, kev), colour in zip(LINES_KEV, ("#c0392b", "#e67e22")):
            axes.axvline(args.gain * kev, color=colour, linestyle="--", linewidth=1,
                         label="%s, %.3f keV = %.1f ADU" % (name, kev, args.gain * kev))
    if peak is not None:
        energies = numpy.linspace(peak["low"], peak["high"], 200)
        width = high[0] - low[0]
        curve = (peak["counts"] * width / (peak["sigma"] * numpy.sqrt(2 * numpy.pi))
                 * numpy.exp(-0.5 * ((energies - peak["position"]) / peak["sigma"]) ** 2)
                 + peak["background"]
                 + peak["background_slope"] * (energies - peak["position"]))
        axes.plot(energies, curve, color="black", linewidth=1,
                  label="fit: %.1f ADU, FWHM %.1f ADU (%.1f %%)"
                  % (peak["position"], peak["fwhm"], 100 * peak["resolution"]))
    axes.set_xlabel("cluster energy (ADU)")
    axes.set_ylabel("clusters per %g ADU bin" % (high[0] - low[0]))
    axes.set_xlim(low[0], high[-1])
    if args.title:
        axes.set_title(args.title, fontsize=10)
    axes.legend(loc="upper right", fontsize=8, frameon=True, framealpha=0.9)
    figure.tight_layout()
    figure.savefig(args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
