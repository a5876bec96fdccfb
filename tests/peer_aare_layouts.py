# SPDX-License-Identifier: BSD-3-Clause
"""peer_aare_layouts.py: aare reads the runs our writer wrote in each
layout (docs/spec.md §5.2) as the frames our reader gives, pixel for
pixel, and those are the frames of the run written in rows.

usage: peer_aare_layouts.py LIBCLUSTERCORE DIRECTORY NAME:LAYOUT...

DIRECTORY/NAME/{dark,data}_master_0.json are the same simulated runs,
written by simulate_raw --layout LAYOUT (LAYOUT rows, moench03-old,
ctb-moench03 or ctb-moench04), the first NAME in rows, some with their
master files edited as other receivers wrote them. Each data run is also
written again here by RawWriter, two frames a file, in its layout. aare
2026.9.30 reads them as a user would (its sources: src/RawMasterFile.cpp,
src/RawSubFile.cpp, src/PixelMap.cpp, python/aare/transform.py):

- rows and moench03-old with aare.RawFile: a "Moench" master of 400 rows
  is Moench03 without "Analog Samples" (rows, no map) and Moench03_old
  with 5000 "Analog Samples", whose RawSubFile gathers through
  GenerateMoench03PixelMap;
- ctb-moench03 and ctb-moench04 with aare.CtbRawFile, which hands over
  each frame's bytes, and the transform of the chip on the board,
  Moench03Transform or Moench04AnalogTransform (np.take through the
  chip's pixel map).
"""
import os
import sys

import numpy as np
import aare
from aare.transform import Moench03Transform, Moench04AnalogTransform

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
import clustercore  # noqa: E402 (from the source tree)

def read_aare(layout, master):
    """aare's frames (n, 400, 400) and frame numbers, and how it took the run."""
    frames, numbers = [], []
    if layout.startswith("ctb-"):
        transform = (Moench03Transform if layout == "ctb-moench03"
                     else Moench04AnalogTransform)()
        f = aare.CtbRawFile(master, transform=transform)
        for _ in range(f.frames_in_file):
            header, frame = f.read_frame()
            frames.append(np.asarray(frame))
            numbers.append(int(np.ravel(header["frameNumber"])[0]))
        return np.array(frames), numbers, "CtbRawFile + %s" % type(transform).__name__
    f = aare.RawFile(master)
    for _ in range(f.total_frames):
        header, frame = f.read_frame()
        frames.append(np.asarray(frame))
        numbers.append(int(np.ravel(header["frameNumber"])[0]))
    return np.array(frames), numbers, "RawFile as %s" % f.detector_type


def compare(label, layout, master, originals):
    """Reads master with aare and with our reader: 0 when both give the
    original frames, else 1, having said why."""
    chip = layout[4:] if layout.startswith("ctb-") else None
    reader = clustercore.RawRun(master, chip=chip)
    ours, our_numbers = reader.read(10000)
    theirs, their_numbers, how = read_aare(layout, master)
    same = (theirs.shape == ours.shape and np.array_equal(theirs, ours)
            and list(our_numbers) == their_numbers)
    original = originals is None or np.array_equal(ours, originals)
    print("%s: aare %s (%s) reads %d frames, %s ours pixel for pixel; %s the "
          "frames of rows" % (label, aare.__version__, how, len(theirs),
                              "the same as" if same else "NOT", "and they are"
                              if original else "but NOT"))
    ok = reader.info["layout"] == layout and same and original and len(ours) > 0
    return (0 if ok else 1), ours, our_numbers


def main():
    library, top = sys.argv[1:3]
    runs = [argument.split(":") for argument in sys.argv[3:]]
    os.environ["CLUSTERCORE_LIBRARY"] = library
    failures = 0
    for run in ("dark", "data"):
        originals = None
        for name, layout in runs:
            master = os.path.join(top, name, "%s_master_0.json" % run)
            failed, frames, numbers = compare("%s %s" % (run, name), layout, master,
                                              originals)
            failures += failed
            if originals is None:
                originals = frames
            if run == "data":
                split = os.path.join(top, "split-%s_master_0.json" % name)
                with clustercore.RawWriter(split, 400, 400, 2, layout=layout) as writer:
                    writer.write(frames, numbers)
                    writer.finish()
                failures += compare("%s, 2 frames a file" % name, layout, split,
                                    originals)[0]
    if failures:
        print("FAIL: %d runs read otherwise by aare or by us" % failures)
        return 1
    return 0

if __name__ == '__main__':
    sys.exit(main())
