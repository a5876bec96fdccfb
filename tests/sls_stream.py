# SPDX-License-Identifier: BSD-3-Clause
"""sls_stream.py PORT FRAMES READY: the receiver's ZMQ stream as a
subscriber of the test's own sees it (tests/ioc_slsdetector.sh), to tell
where the frames of an acquisition went.

Subscribes to tcp://127.0.0.1:PORT and touches READY once its connection
has shaken hands with the receiver's publisher (its subscription then
goes out ahead of any frame). Writes the frame number of every frame the
receiver streams in one acquisition to FRAMES, one a line, and ends at
the receiver's end-of-acquisition message (a header with "data": 0), or
fails after 300 s without one.

PSI's client library (Detector::acquire, which the slsDetector driver
calls) connects its own subscriber only as it starts the acquisition:
ZMQ's publisher drops what it sends before a subscription has arrived,
so the first frames can miss the driver, never this subscriber.
"""
import json
import sys
import time

import zmq
from zmq.utils.monitor import recv_monitor_message

port, frames_path, ready_path = sys.argv[1], sys.argv[2], sys.argv[3]
context = zmq.Context()
socket = context.socket(zmq.SUB)
monitor = socket.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED)
socket.setsockopt(zmq.SUBSCRIBE, b"")
socket.connect("tcp://127.0.0.1:%s" % port)
if not monitor.poll(60000):
    sys.exit("sls_stream.py: no connection to the receiver's stream on port %s" % port)
recv_monitor_message(monitor)
open(ready_path, "w").close()

numbers = []
deadline = time.monotonic() + 300
while True:
    left = deadline - time.monotonic()
    if left <= 0 or not socket.poll(int(left * 1000)):
        sys.exit("sls_stream.py: no end of acquisition in 300 s (%d frames so far)" % len(numbers))
    parts = socket.recv_multipart()
    header = json.loads(parts[0])
    if not header.get("data"):
        break
    numbers.append(header["frameNumber"])
with open(frames_path, "w") as out:
    out.writelines("%d\n" % n for n in numbers)
