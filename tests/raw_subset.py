# SPDX-License-Identifier: BSD-3-Clause
"""raw_subset.py [--numbers FILE] OUT_MASTER MASTER:FIRST:COUNT...: a raw run of chosen frames.

Writes OUT_MASTER (NAME_master_0.json) and its one data file
NAME_d0_f0_0.raw holding, in order, frames FIRST .. FIRST + COUNT - 1 of
each MASTER's run (one data file, one UDP interface), headers and pixels
as the receiver wrote them; the master file is the first input's, with
the frame counts changed. The IOC tests use it to give clusterfind
exactly the frames that reached the plugin. With --numbers, FILE gets the
detector's frame number (each frame header's first field) of each frame
written, one a line: which frames those were, when the receiver lost some.
"""
import json
import os
import struct
import sys

HEADER = 112


def main():
    args = sys.argv[1:]
    numbers = None
    if args[:1] == ["--numbers"]:
        numbers = open(args[1], "w", encoding="utf-8")
        args = args[2:]
    out_master = args[0]
    if not out_master.endswith("_master_0.json"):
        sys.exit("raw_subset.py: %s does not end in _master_0.json" % out_master)
    out_data = out_master[:-len("_master_0.json")] + "_d0_f0_0.raw"
    master = None
    total = 0
    with open(out_data, "wb") as out:
        for part in args[1:]:
            path, first, count = part.rsplit(":", 2)
            first, count = int(first), int(count)
            with open(path, encoding="utf-8") as f:
                info = json.load(f)
            master = master or info
            frame = HEADER + info["Image Size in bytes"]
            data = path[:-len("_master_0.json")] + "_d0_f0_0.raw"
            if os.path.getsize(data) < (first + count) * frame:
                sys.exit("raw_subset.py: %s has fewer than %d frames" % (data, first + count))
            with open(data, "rb") as f:
                f.seek(first * frame)
                for _ in range(count):
                    data_frame = f.read(frame)
                    out.write(data_frame)
                    if numbers:
                        numbers.write("%d\n" % struct.unpack_from("<Q", data_frame)[0])
            total += count
    if numbers:
        numbers.close()
    master["Frames in File"] = total
    master["Total Frames"] = total
    with open(out_master, "w", encoding="utf-8") as f:
        json.dump(master, f, indent=4)


if __name__ == "__main__":
    main()
