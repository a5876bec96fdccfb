# SPDX-License-Identifier: BSD-3-Clause
"""Raw runs and .clust files from Python: the receiver's real run and
aare's file read as they are; damage warned about, never hidden; writers
that leave nothing unfinished."""
import os
import shutil

import numpy
import pytest

import clustercore


def test_the_receivers_run(shared_data):
    run = clustercore.RawRun(os.path.join(shared_data, "slsreceiver-9.2.0",
                                          "moench_virtual_master_0.json"))
    assert run.shape == (400, 400)
    assert run.info["version"] == 7.2 and run.info["interfaces"] == 1
    frames, numbers = run.read(100)
    assert frames.shape == (5, 400, 400) and frames.dtype == numpy.uint16
    assert list(numbers) == [1, 2, 3, 4, 5]
    assert len(run.read()[0]) == 0
    assert run.stats["frames_read"] == 5


def test_a_truncated_run_warns_and_keeps_its_complete_frames(shared_data, tmp_path):
    source = os.path.join(shared_data, "slsreceiver-9.2.0")
    for name in os.listdir(source):
        shutil.copy(os.path.join(source, name), tmp_path)
    data = tmp_path / "moench_virtual_d0_f0_0.raw"
    data.write_bytes(data.read_bytes()[:-1000])
    run = clustercore.RawRun(tmp_path / "moench_virtual_master_0.json")
    with pytest.warns(clustercore.RawRunWarning, match="truncated"):
        frames = numpy.concatenate([f for f, _ in run])
    assert len(frames) == 4
    assert run.stats["files_truncated"] == 1


def test_a_refused_master_file_says_why(tmp_path):
    (tmp_path / "x_master_0.json").write_text('{"Version": 7.2, "Detector Type": "Jungfrau"}')
    with pytest.raises(clustercore.ClusterCoreError, match="Moench|Detector Type"):
        clustercore.RawRun(tmp_path / "x_master_0.json")


def test_raw_writer_round_trip_and_nothing_left_unfinished(tmp_path):
    frames = numpy.arange(3 * 4 * 6, dtype=numpy.uint16).reshape(3, 4, 6)
    with clustercore.RawWriter(tmp_path / "r_master_0.json", 4, 6, 2) as writer:
        writer.write(frames, [7, 8, 9])
        writer.finish()
    back, numbers = clustercore.RawRun(tmp_path / "r_master_0.json").read(10)
    assert numpy.array_equal(back, frames) and list(numbers) == [7, 8, 9]
    with clustercore.RawWriter(tmp_path / "u_master_0.json", 4, 6) as writer:
        writer.write(frames, [1, 2, 3])
        with pytest.raises(TypeError, match="uint16"):
            writer.write(frames.astype(numpy.float32), [4, 5, 6])
        with pytest.raises(ValueError, match="frame numbers"):
            writer.write(frames, [4, 5])
    assert not [name for name in os.listdir(tmp_path) if name.startswith("u_")]


@pytest.mark.parametrize("layout", ["moench03-old", "ctb-moench03", "ctb-moench04"])
def test_runs_in_adc_order_read_back_in_rows(tmp_path, layout):
    sim = clustercore.Simulator(flux=300, seed=2)
    frames = sim.frames(3)
    master = tmp_path / "l_master_0.json"
    with clustercore.RawWriter(master, 400, 400, 2, layout=layout) as writer:
        writer.write(frames, [4, 5, 6])
        writer.finish()
    # The data file is not in rows; the reader's frames are.
    stored = numpy.fromfile(tmp_path / "l_d0_f0_0.raw", numpy.uint16, 400 * 400, offset=112)
    assert not numpy.array_equal(stored, frames[0].ravel())
    chip = {"ctb-moench03": "moench03", "ctb-moench04": "moench04"}.get(layout)
    run = clustercore.RawRun(master, chip=chip)
    assert run.info["layout"] == layout and run.shape == (400, 400)
    back, numbers = run.read(10)
    assert numpy.array_equal(back, frames) and list(numbers) == [4, 5, 6]
    if chip is not None:
        with pytest.raises(clustercore.ClusterCoreError, match="which chip") as refused:
            clustercore.RawRun(master)
        assert refused.value.name == "CC_ENOTSUP"
    with pytest.raises(ValueError, match="chip"):
        clustercore.RawRun(master, chip="moench05")
    with pytest.raises(clustercore.ClusterCoreError, match="400 x 400"):
        clustercore.RawWriter(tmp_path / "s_master_0.json", 4, 6, layout=layout)


def test_aares_clust_file(shared_data, tmp_path):
    path = os.path.join(shared_data, "aare_single_frame_97.clust")
    table = clustercore.read_clust(path, 3)
    assert len(table) == 97 and set(table["frame"]) == {135}
    assert (table["x"][0], table["y"][0]) == (1, 200)
    assert list(table["data"][0].ravel()) == list(range(9))
    with clustercore.ClustReader(path, 3) as reader, \
            clustercore.ClustWriter(tmp_path / "copy.clust") as writer:
        for clusters in reader:
            writer.write(clusters)
        writer.finish()
    assert (tmp_path / "copy.clust").read_bytes() == open(path, "rb").read()
    with pytest.raises(clustercore.ClusterCoreError) as error:
        clustercore.read_clust(path, 9)
    assert error.value.name == "CC_EFORMAT"
