# SPDX-License-Identifier: BSD-3-Clause
"""Where aare is importable ($AARE_PYTHON, default /opt/aare/venv/bin/python):
clusters that this package finds and writes are read by aare's
ClusterFile as the same records, and their η equals aare's, bit for bit.
aare runs in its own Python, with this package on its path."""
import os
import subprocess

import pytest

import clustercore

AARE_PYTHON = os.environ.get("AARE_PYTHON", "/opt/aare/venv/bin/python")

CHECK = r'''
import sys
import numpy as np
import aare
import clustercore

path = sys.argv[1]
sim = clustercore.Simulator(rows=100, cols=120, flux=60, seed=4)
finder = clustercore.Finder(100, 120, pedestal_frames=60)
finder.train(sim.dark_frames(60))
clusters = finder.process(sim.frames(1))
writer = clustercore.ClustWriter(path)
writer.write(clusters)
writer.finish()
ours = clusters.array()
theirs = np.array(aare.ClusterFile(path, cluster_size=(3, 3), dtype=np.int32).read_frame())
assert len(ours) == len(theirs) > 20, (len(ours), len(theirs))
for field in ("x", "y", "data"):
    assert np.array_equal(ours[field], theirs[field].reshape(ours[field].shape)), field
cv = aare.ClusterFile(path, cluster_size=(3, 3), dtype=np.int32).read_frame()
for function, theirs_eta in (("eta2", aare.calculate_eta2), ("eta2full", aare.calculate_full_eta2),
                             ("eta3", aare.calculate_eta3)):
    eta = clustercore.eta(clusters, function)
    valid = eta["valid"] == 1
    reference = np.asarray(theirs_eta(cv))
    assert valid.sum() > 0.8 * len(eta), function
    assert np.array_equal(eta["x"][valid], reference["x"][valid]), function
    assert np.array_equal(eta["y"][valid], reference["y"][valid]), function
print("aare %s reads %d clusters as ours; eta2, eta2full, eta3 equal" % (aare.__version__, len(ours)))
'''


def test_aare_reads_our_clusters_and_agrees_on_eta(tmp_path):
    try:
        found = subprocess.run([AARE_PYTHON, "-c", "import aare"],
                               capture_output=True).returncode == 0
    except OSError:  # no such program
        found = False
    if not found:
        pytest.skip("no Python with aare at %s (set AARE_PYTHON)" % AARE_PYTHON)
    environment = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(
        os.path.abspath(clustercore.__file__))), CLUSTERCORE_LIBRARY=clustercore.library_path())
    done = subprocess.run([AARE_PYTHON, "-c", CHECK, str(tmp_path / "ours.clust")],
                          capture_output=True, text=True, env=environment)
    assert done.returncode == 0, done.stdout + done.stderr
    print(done.stdout)
