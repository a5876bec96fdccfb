# SPDX-License-Identifier: BSD-3-Clause
"""raw_subset.py OUT_MASTER MASTER:FIRST:COUNT...: a raw run of chosen frames.

Writes OUT_MASTER (NAME_master_0.json) and its one data file
NAME_d0_f0_0.raw holding, in order, frames FIRST .. FIRST + COUNT - 1 of
each MASTER's run (one data file, one UDP interface), headers and pixels
as the receiver wrote them; the master file is the first input's, with
the frame counts changed. The IOC tests use it to give clusterfind
exactly the frames that reached the plugin.
"""
import json
import os
import sys

HEADER = 112


def main():
    out_master = sys.argv[1]
    if not out_master.endswith("_master_0.json"):
        sys.exit("raw_subset.py: %s does not end in _master_0.json" % out_master)
    out_data = out_master[:-len("_master_0.json")] + "_d0_f0_0.raw"
    master = None
    total = 0
    with open(out_data, "wb") as out:
        for part in sys.argv[2:]:
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
                    out.write(f.read(frame))
            total += count
    master["Frames in File"] = total
    master["Total Frames"] = total
    with open(out_master, "w", encoding="utf-8") as f:
        json.dump(master, f, indent=4)


if __name__ == "__main__":
    main()
