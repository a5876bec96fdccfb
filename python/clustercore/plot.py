# SPDX-License-Identifier: BSD-3-Clause
"""Pictures of a run's outputs (matplotlib): the spectrum on a log scale
with Cu Kα and Kβ marked, the hit map, the interpolated image and the
noise map, each with its axes and units; and the clusterfind-plot
program, which draws the four as one report:

    clusterfind-plot RUN_OUTPUTS... -o report.png [--gain ADU_PER_KEV]

RUN_OUTPUTS are clusterfind's files or directories of them (as
clusterfind-batch writes a run's or a beamtime's totals). Needs
matplotlib; no libclustercore."""
import argparse
import sys

import numpy

from . import outputs

__all__ = ["LINES_KEV", "draw_spectrum", "draw_map", "report", "main"]

LINES_KEV = (("Cu Kα", 8.048), ("Cu Kβ", 8.905))


def draw_spectrum(axes, spectrum, gain=None):
    """A SpectrumData (outputs.read_spectrum) as a histogram on a log scale,
    under- and overflow in the legend, its fitted line drawn; with gain
    (ADU per keV), Cu Kα and Kβ marked at gain times their energy."""
    edges, counts = spectrum.edges, spectrum.counts
    width = edges[1] - edges[0]
    axes.stairs(counts, edges, fill=True, color="#4a7ab5",
                label="clusters (%d); below %g ADU: %d, above %g ADU: %d"
                % (counts.sum(), edges[0], spectrum.underflow, edges[-1], spectrum.overflow))
    if counts.max(initial=0) > 0:
        axes.set_yscale("log")
        axes.set_ylim(bottom=0.8, top=counts.max() * 30)
    if gain:
        for (name, kev), colour in zip(LINES_KEV, ("#c0392b", "#e67e22")):
            axes.axvline(gain * kev, color=colour, linestyle="--", linewidth=1,
                         label="%s, %.3f keV = %.1f ADU" % (name, kev, gain * kev))
    peak = spectrum.peak
    if peak is not None:
        energies = numpy.linspace(peak["low"], peak["high"], 200)
        curve = (peak["counts"] * width / (peak["sigma"] * numpy.sqrt(2 * numpy.pi))
                 * numpy.exp(-0.5 * ((energies - peak["position"]) / peak["sigma"]) ** 2)
                 + peak["background"] + peak["background_slope"] * (energies - peak["position"]))
        axes.plot(energies, curve, color="black", linewidth=1,
                  label="fit: %.1f ADU, FWHM %.1f ADU (%.1f %%)"
                  % (peak["position"], peak["fwhm"], 100 * peak["resolution"]))
    axes.set_xlabel("cluster energy (ADU)")
    axes.set_ylabel("clusters per %g ADU bin" % width)
    axes.set_xlim(edges[0], edges[-1])
    axes.legend(loc="upper right", fontsize=7, frameon=True, framealpha=0.9)


def draw_map(axes, figure, array, title, unit, region, scale=1, cmap="viridis"):
    """A per-pixel (scale 1) or per-sub-pixel (scale S) map over region
    (col0, col1, row0, row1) in pixels, row 0 at the top."""
    c0, c1, r0, r1 = region
    shown = array[r0 * scale:r1 * scale, c0 * scale:c1 * scale]
    # A few hot pixels would take the whole colour scale: it ends at the
    # 99.9th percentile, and the label says so.
    top = float(numpy.percentile(shown, 99.9)) if shown.size else 0.0
    if not top > 0:
        top = float(shown.max(initial=0)) or 1.0
    if shown.max(initial=0) > top:
        unit += " (colour clipped at %.4g)" % top
    drawn = axes.imshow(shown, cmap=cmap, extent=(c0, c1, r1, r0), interpolation="nearest",
                        vmin=0, vmax=top)
    axes.set_title(title, fontsize=10)
    axes.set_xlabel("column (pixel)")
    axes.set_ylabel("row (pixel)")
    figure.colorbar(drawn, ax=axes, shrink=0.85, label=unit)


def _parse_region(text, rows, cols):
    try:
        columns, lines = text.split(",")
        c0, c1 = (int(v) for v in columns.split(":"))
        r0, r1 = (int(v) for v in lines.split(":"))
    except ValueError:
        raise ValueError("--region %s: give COL0:COL1,ROW0:ROW1" % text) from None
    if not (0 <= c0 < c1 <= cols and 0 <= r0 < r1 <= rows):
        raise ValueError("--region %s: outside the %d x %d pixels" % (text, cols, rows))
    return c0, c1, r0, r1


def load(found):
    """The arrays of find_outputs' files, checked against each other:
    the maps of one frame size, the image an S-fold one."""
    data = {}
    if "spectrum" in found:
        data["spectrum"] = outputs.read_spectrum(found["spectrum"])
    for kind in ("hitmap", "counts", "image"):
        if kind in found:
            data[kind] = outputs.read_map(found[kind], "u")
    if "noise" in found:
        data["noise"] = outputs.read_map(found["noise"], "f")
    shapes = {data[k].shape for k in ("hitmap", "counts", "noise") if k in data}
    if len(shapes) > 1:
        raise ValueError("the maps have different shapes: %s" % sorted(shapes))
    if "image" in data and shapes:
        rows, cols = shapes.pop()
        s = data["image"].shape[0] // rows
        if s < 1 or data["image"].shape != (rows * s, cols * s):
            raise ValueError("%s (%s) is not an S-fold image of the %d x %d maps"
                             % (found["image"], data["image"].shape, rows, cols))
        data["subpixels"] = s
    return data


def report(data, path, gain=None, region=None, title=""):
    """Draws the report of load()'s data into path (PNG): the spectrum,
    the hit map (or the counting image), the interpolated image and the
    noise map; a panel without its file says so."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    figure, grid = pyplot.subplots(2, 2, figsize=(11, 9), dpi=100)
    spectrum_axes, hits_axes, image_axes, noise_axes = grid.ravel()
    reference = next((data[k] for k in ("hitmap", "counts", "noise") if k in data), None)
    rows, cols = reference.shape if reference is not None else data["image"].shape
    area = _parse_region(region, rows, cols) if region else (0, cols, 0, rows)

    def missing(axes, what):
        axes.set_axis_off()
        axes.text(0.5, 0.5, "no %s given" % what, ha="center", va="center",
                  transform=axes.transAxes, color="grey")

    if "spectrum" in data:
        draw_spectrum(spectrum_axes, data["spectrum"], gain)
        spectrum_axes.set_title("spectrum", fontsize=10)
    else:
        missing(spectrum_axes, "spectrum")
    hits = "hitmap" if "hitmap" in data else "counts" if "counts" in data else None
    if hits:
        if hits == "hitmap":
            draw_map(hits_axes, figure, data[hits], "hit map: cluster centres",
                     "clusters per pixel", area)
        else:
            draw_map(hits_axes, figure, data[hits], "counting image: photons in the window",
                     "photons per pixel", area)
    else:
        missing(hits_axes, "hit map")
    if "image" in data:
        s = data.get("subpixels", 1)
        draw_map(image_axes, figure, data["image"],
                 "interpolated image, %d x %d sub-pixels a pixel" % (s, s),
                 "photons per sub-pixel", area, s, cmap="gray")
    else:
        missing(image_axes, "interpolated image")
    if "noise" in data:
        noise = data["noise"]
        draw_map(noise_axes, figure, noise, "noise: pedestal rms (median %.1f ADU)"
                 % numpy.median(noise), "ADU", area, cmap="magma")
    else:
        missing(noise_axes, "noise map")
    if title:
        figure.suptitle(title)
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="clusterfind-plot", description="Draws a run's outputs (clusterfind's "
        "spectrum CSV, hit map, interpolated image and noise map) as one PNG.")
    parser.add_argument("outputs", nargs="+", metavar="RUN_OUTPUTS",
                        help="clusterfind's files, or directories of them")
    parser.add_argument("-o", "--output", required=True, help="the PNG to write")
    parser.add_argument("--gain", type=float, help="ADU per keV: marks Cu Kα and Kβ")
    parser.add_argument("--region", help="COL0:COL1,ROW0:ROW1: the maps' area, in pixels")
    parser.add_argument("--title", default="")
    args = parser.parse_args(argv)
    try:
        data = load(outputs.find_outputs(args.outputs))
        report(data, args.output, args.gain, args.region, args.title)
    except (OSError, ValueError) as error:
        print("clusterfind-plot: %s" % error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
