#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""plot_image.py IMAGE.npy -o OUT.png [--counts COUNTS.npy]
                 [--region COL0:COL1,ROW0:ROW1] [--title T]

Draws the interpolated image that clusterfind --image wrote (uint32, rows·S
by cols·S) beside, with --counts, the counting image of the same photons
(uint32, rows by cols), both over the same region of the detector in
pixels (default: all of it). S is taken from the two shapes. Needs numpy
and matplotlib.
"""
import argparse
import sys

import numpy


def load_counts(path):
    """A 2-D uint32 array that clusterfind wrote, or ValueError."""
    try:
        array = numpy.load(path, allow_pickle=False)
    except (OSError, ValueError) as error:
        raise ValueError("%s: not a NumPy .npy file (%s)" % (path, error)) from None
    if array.ndim != 2 or array.dtype != numpy.dtype("<u4"):
        raise ValueError("%s: not a clusterfind image (2-D uint32 needed, found "
                         "%s of shape %s)" % (path, array.dtype, array.shape))
    return array


def parse_region(text, rows, cols):
    """COL0:COL1,ROW0:ROW1 in pixels, inside the detector."""
    try:
        columns, lines = text.split(",")
        c0, c1 = (int(v) for v in columns.split(":"))
        r0, r1 = (int(v) for v in lines.split(":"))
    except ValueError:
        raise ValueError("--region %s: give COL0:COL1,ROW0:ROW1" % text) from None
    if not (0 <= c0 < c1 <= cols and 0 <= r0 < r1 <= rows):
        raise ValueError("--region %s: outside the %d x %d pixels" % (text, cols, rows))
    return c0, c1, r0, r1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image")
    parser.add_argument("-o", "--output", required=True)
    parser.add_argument("--counts")
    parser.add_argument("--region")
    parser.add_argument("--title", default="")
    args = parser.parse_args()
    try:
        image = load_counts(args.image)
        counts = load_counts(args.counts) if args.counts else None
        if counts is not None:
            s = image.shape[0] // counts.shape[0]
            if s < 1 or image.shape != (counts.shape[0] * s, counts.shape[1] * s):
                raise ValueError("%s (%s) is not an S-fold image of %s (%s)"
                                 % (args.image, image.shape, args.counts, counts.shape))
            rows, cols = counts.shape
        else:
            s, (rows, cols) = 1, image.shape
        c0, c1, r0, r1 = (parse_region(args.region, rows, cols) if args.region
                          else (0, cols, 0, rows))
    except ValueError as error:
        print("plot_image.py: %s" % error, file=sys.stderr)
        return 1

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    panels = [(image[r0 * s:r1 * s, c0 * s:c1 * s],
               "interpolated, %d x %d sub-pixels a pixel" % (s, s))]
    if counts is not None:
        panels.insert(0, (counts[r0:r1, c0:c1], "counting image, one bin a pixel"))
    figure, axes = pyplot.subplots(1, len(panels), figsize=(5.2 * len(panels), 5))
    axes = numpy.atleast_1d(axes)
    extent = (c0, c1, r1, r0)  # pixel coordinates, row 0 at the top
    for axis, (data, label) in zip(axes, panels):
        shown = axis.imshow(data, cmap="gray", extent=extent, interpolation="nearest")
        axis.set_title(label, fontsize=10)
        axis.set_xlabel("column (pixel)")
        axis.set_ylabel("row (pixel)")
        figure.colorbar(shown, ax=axis, shrink=0.8, label="photons")
    if args.title:
        figure.suptitle(args.title)
    figure.tight_layout()
    figure.savefig(args.output, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
