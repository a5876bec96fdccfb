# SPDX-License-Identifier: BSD-3-Clause
"""η, the calibration and the interpolated image from Python equal
clusterfind's on the same frames; the GPU-side imaging of the finder
equals the interpolator's."""
import numpy
import pytest

import clustercore
from conftest import run


def test_calibration_and_image_equal_clusterfinds(raw_run, clusterfind, tmp_path):
    dark, data = raw_run
    common = ["--pedestal", dark, "--data", data, "--energy", "sum2x2",
              "--energy-window", "500:1100"]
    run(clusterfind, *common, "--eta-calibrate", tmp_path / "cf.eta", "--eta-bins", 20)
    run(clusterfind, *common, "--eta-map", tmp_path / "cf.eta", "--eta-bins", 20,
        "--subpixels", 4, "--image", tmp_path / "cf_image.npy",
        "--counts", tmp_path / "cf_counts.npy")

    window = clustercore.EnergyWindow(500, 1100, "sum2x2")
    frames, _ = clustercore.RawRun(dark).read(1000)
    finder = clustercore.Finder(400, 400, pedestal_frames=len(frames))
    finder.train(frames)
    calibration = clustercore.EtaCalibration("eta2", 20, window)
    batches = [finder.process(batch, numbers) for batch, numbers in clustercore.RawRun(data)]
    for clusters in batches:
        calibration.add(clusters)
    calibration.save(tmp_path / "py.eta")
    assert (tmp_path / "py.eta").read_bytes() == (tmp_path / "cf.eta").read_bytes()

    read_back = clustercore.EtaCalibration.read(tmp_path / "cf.eta")
    assert numpy.array_equal(read_back.counts, calibration.counts)
    assert read_back.info["window"] == window
    interpolator = clustercore.Interpolator(read_back, 400, 400, 4, window)
    counts = clustercore.HitMap(400, 400, window)
    for clusters in batches:
        interpolator.add(clusters)
        counts.add(clusters)
    interpolator.write_npy(tmp_path / "py_image.npy")
    assert (tmp_path / "py_image.npy").read_bytes() == (tmp_path / "cf_image.npy").read_bytes()
    assert numpy.array_equal(counts.counts, numpy.load(tmp_path / "cf_counts.npy"))
    assert interpolator.stats["photons"] == counts.counts.sum()

    # The finder's own imaging (on the GPU when CUDA runs) gives the same image.
    finder.reset()
    finder.train(frames)
    finder.set_interpolator(interpolator)
    for batch, numbers in clustercore.RawRun(data):
        finder.process(batch, numbers)
    taken = clustercore.Interpolator(read_back, 400, 400, 4, window)
    finder.take_image(taken)
    assert numpy.array_equal(taken.image, interpolator.image)


def test_eta_values_and_positions():
    simulator = clustercore.Simulator(rows=40, cols=40, flux=10, seed=2)
    finder = clustercore.Finder(40, 40, pedestal_frames=40)
    finder.train(simulator.dark_frames(40))
    clusters = finder.process(simulator.frames(20))
    for function in ("eta2", "eta2full", "eta3"):
        low, high = clustercore.eta_range(function)
        eta = clustercore.eta(clusters, function)
        assert len(eta) == len(clusters) > 0
        good = eta[eta["valid"] == 1]
        assert ((good["x"] >= low) & (good["x"] <= high)).all()
        assert (eta[eta["valid"] == 0][["x", "y"]].tolist() == [(0.0, 0.0)] *
                int((eta["valid"] == 0).sum()))
    calibration = clustercore.EtaCalibration("eta2", 10)
    calibration.add(clusters)
    interpolator = clustercore.Interpolator(calibration, 40, 40, 5)
    positions = interpolator.positions(clusters)
    table = clusters.array()
    placed = positions["status"] == 0
    # A photon is placed inside its centre pixel's neighbourhood.
    assert (abs(positions["x"][placed] - (table["x"][placed] + 0.5)) <= 1.5).all()
    assert (abs(positions["y"][placed] - (table["y"][placed] + 0.5)) <= 1.5).all()
    assert clustercore.Interpolator(calibration, 40, 40, 1).flatness() is None
    with pytest.raises(ValueError, match="function must be one of"):
        clustercore.eta(clusters, "eta4")
    with pytest.raises(clustercore.ClusterCoreError, match="sub-pixel|subpixel|1..25"):
        clustercore.Interpolator(calibration, 40, 40, 26)
    with pytest.raises(clustercore.ClusterCoreError):
        clustercore.EnergyWindow(5, 5).c_struct()
