# SPDX-License-Identifier: BSD-3-Clause
"""The finder from Python gives clusterfind's bytes on the same run, takes
numpy frames as they come, refuses bad input with the library's message,
and does not leak."""
import os

import numpy
import pytest

import clustercore
from conftest import run


def find_like_clusterfind(dark_master, data_master, tmp_path, **settings):
    """The run through the package: the .clust, spectrum CSV, hit map,
    noise map and analog image that clusterfind writes for the same
    settings (batches of 32 frames, as clusterfind's)."""
    dark = clustercore.RawRun(dark_master)
    frames, _ = dark.read(1000)
    finder = clustercore.Finder(*dark.shape, pedestal_frames=len(frames), threads=2,
                                **settings)
    finder.train(frames)
    numpy.save(tmp_path / "py_noise.npy", finder.pedestal_maps()[1])
    finder.set_analog()
    size = finder.settings["cluster_size"]
    writer = clustercore.ClustWriter(tmp_path / "py.clust")
    spectrum = clustercore.Spectrum(400, 0, 2000)
    hitmap = clustercore.HitMap(*dark.shape)
    for batch, numbers in clustercore.RawRun(data_master):
        clusters = finder.process(batch, numbers)
        writer.write(clusters)
        spectrum.add(clusters)
        hitmap.add(clusters)
    writer.finish()
    spectrum.write_csv(tmp_path / "py.csv", spectrum.fit_peak())
    numpy.save(tmp_path / "py_hitmap.npy", hitmap.counts)
    sums, frames = finder.take_analog()
    numpy.save(tmp_path / "py_analog.npy", sums)
    return size, frames


@pytest.mark.parametrize("size", [3, 5])
def test_same_bytes_as_clusterfind(raw_run, clusterfind, tmp_path, size):
    dark, data = raw_run
    run(clusterfind, "--pedestal", dark, "--data", data, "--pedestal-frames", 1000,
        "--cluster-size", size, "--output", tmp_path / "cf.clust",
        "--spectrum", tmp_path / "cf.csv", "--hitmap", tmp_path / "cf_hitmap.npy",
        "--noise", tmp_path / "cf_noise.npy", "--analog", tmp_path / "cf_analog.npy")
    _, summed = find_like_clusterfind(dark, data, tmp_path, cluster_size=size)
    assert summed == 12
    for ours, theirs in (("py.clust", "cf.clust"), ("py.csv", "cf.csv"),
                         ("py_hitmap.npy", "cf_hitmap.npy"), ("py_noise.npy", "cf_noise.npy"),
                         ("py_analog.npy", "cf_analog.npy")):
        assert (tmp_path / ours).read_bytes() == (tmp_path / theirs).read_bytes(), ours
    table = clustercore.read_clust(tmp_path / "cf.clust", size)
    assert len(table) > 100
    assert table.dtype.names == ("frame", "x", "y", "data")
    assert table["data"].shape[1:] == (size, size)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A simulator, a finder trained on its dark frames, and that
    pedestal saved, so that each test can start from it."""
    simulator = clustercore.Simulator(rows=48, cols=64, flux=15, seed=11)
    finder = clustercore.Finder(48, 64, pedestal_frames=50)
    finder.train(simulator.dark_frames(50))
    pedestal = tmp_path_factory.mktemp("pedestal") / "trained.ped"
    finder.save_pedestal(pedestal)
    return simulator, finder, pedestal


def clusters_of(trained, frames):
    _, finder, pedestal = trained
    finder.load_pedestal(pedestal)
    return finder.process(frames, range(len(frames)) if numpy.ndim(frames[0]) == 2 else None)


def test_frames_as_they_come(trained):
    """Contiguous, strided and listed frames give the same clusters, the
    strided and listed ones through the list path, without a copy."""
    frames = trained[0].frames(8)[::2]
    expected = clusters_of(trained, numpy.ascontiguousarray(frames)).array()
    assert len(expected) > 0
    assert numpy.array_equal(clusters_of(trained, frames).array(), expected)
    assert numpy.array_equal(clusters_of(trained, list(frames)).array(), expected)
    assert clusters_of(trained, frames[0]).frame_count == 1


def test_training_takes_the_same_layouts():
    simulator = clustercore.Simulator(rows=16, cols=24, seed=5)
    dark = simulator.dark_frames(20)
    wide = numpy.zeros((40, 16, 24), numpy.uint16)
    wide[::2] = dark
    maps = []
    for frames in (dark, wide[::2], list(dark), dark.astype(">u2")):
        finder = clustercore.Finder(16, 24, pedestal_frames=20)
        finder.train(frames)
        assert finder.stats["state"] == "ready"
        maps.append(numpy.concatenate(finder.pedestal_maps()))
    assert all(numpy.array_equal(m, maps[0]) for m in maps)


def test_cluster_records_are_aares(trained):
    """(frame, x, y, data): aare's ClusterVector record after the frame."""
    clusters = clusters_of(trained, trained[0].frames(3))
    table = clusters.array()
    assert table.dtype.itemsize == 8 + 2 + 2 + 9 * 4
    assert table.dtype.fields["x"][0] == numpy.dtype("<u2")
    assert table.dtype.fields["data"][0] == numpy.dtype(("<i4", (3, 3)))
    per_frame = clusters.frames()
    assert list(per_frame["frame"]) == [0, 1, 2]
    assert per_frame["count"].sum() == len(table) == len(clusters)
    assert numpy.array_equal(numpy.unique(table["frame"]),
                             per_frame["frame"][per_frame["count"] > 0])


def test_a_list_made_from_records(trained, tmp_path):
    """Clusters.from_array: the records and frames of a list make that list
    again, for every analysis; records alone make a frame of each run of
    one frame number; records that do not fit are refused."""
    clusters = clusters_of(trained, trained[0].frames(6))
    table, frames = clusters.array(), clusters.frames()
    frames["dropped"][2] = 4
    made = clustercore.Clusters.from_array(table, frames)
    assert numpy.array_equal(made.array(), table)
    assert numpy.array_equal(made.frames(), frames)
    spectra = [clustercore.Spectrum(100, 0, 2000) for _ in range(2)]
    for spectrum, source in zip(spectra, (clusters, made)):
        spectrum.add(source)
    assert numpy.array_equal(spectra[0].counts, spectra[1].counts)
    ours = tmp_path / "made.clust"
    writer = clustercore.ClustWriter(ours)
    writer.write(made)
    writer.finish()
    assert numpy.array_equal(clustercore.read_clust(ours, 3), table)
    # A selection, by records alone: the frames with clusters, in order.
    chosen = table[table["data"].sum(axis=(1, 2)) > 500]
    alone = clustercore.Clusters.from_array(chosen)
    assert numpy.array_equal(alone.array(), chosen)
    assert list(alone.frames()["frame"]) == list(numpy.unique(chosen["frame"]))
    assert len(clustercore.Clusters.from_array(table[:0])) == 0
    with pytest.raises(ValueError, match="fields frame, x, y and data"):
        clustercore.Clusters.from_array(numpy.zeros(3))
    signed = table.astype([("frame", "<u8"), ("x", "<i4"), ("y", "<u2"),
                           ("data", "<i4", (3, 3))])
    signed["x"][0] = -1  # as uint16 it would become 65535
    with pytest.raises(ValueError, match="x holds values"):
        clustercore.Clusters.from_array(signed)
    with pytest.raises(ValueError, match="do not describe the records"):
        clustercore.Clusters.from_array(table, frames[1:])
    wide = numpy.zeros(2, clustercore.cluster_dtype(4, 3))
    with pytest.raises(clustercore.ClusterCoreError, match="cluster size 4 x 3 must be odd"):
        clustercore.Clusters.from_array(wide)


def test_agreement_of_two_lists(trained):
    """clustercore.agreement: a list against itself in another order
    agrees cluster for cluster; a cluster dropped from one side, or moved
    away from its window's maximum, is counted under its cause; lists of
    other lengths are refused."""
    _, finder, _ = trained
    clusters = clusters_of(trained, trained[0].frames(4))
    table, frames = clusters.array(), clusters.frames()
    shuffled = numpy.concatenate([table[table["frame"] == f][::-1] for f in frames["frame"]])
    same = clustercore.agreement(clusters, clustercore.Clusters.from_array(shuffled, frames))
    assert same["frames"] == 4 and same["clusters"] == (len(table), len(table))
    assert same["same_values"] == len(table) and same["only"] == (0, 0)
    # b: frame 0 without its first cluster, and with one at a free centre
    # whose corner holds more than its centre.
    first = table[table["frame"] == frames["frame"][0]]
    taken = set(zip(first["x"].tolist(), first["y"].tolist()))
    extra = first[:1].copy()
    extra["x"], extra["y"] = next((x, 2) for x in range(64) if (x, 2) not in taken)
    extra["data"][0, 0, 0] = extra["data"][0, 1, 1] + 7
    other = numpy.concatenate([first[1:], extra, table[len(first):]])
    rms = finder.pedestal_maps()[1]
    result = clustercore.agreement(clusters, clustercore.Clusters.from_array(other, frames),
                                   thresholds=(5 * rms, 5 * rms))
    assert result["only"] == (1, 1) and result["not_max"] == (0, 1)
    assert result["same_place"] == result["same_values"] == len(table) - 1
    with pytest.raises(clustercore.ClusterCoreError, match="frames"):
        clustercore.agreement(clusters, clustercore.Clusters.from_array(table[:0]))
    with pytest.raises(ValueError, match="two maps"):
        clustercore.agreement(clusters, clusters, thresholds=(rms,))


def test_bad_input_raises_with_the_reason(trained, tmp_path):
    simulator, finder, _ = trained
    frames = simulator.frames(2)
    with pytest.raises(TypeError, match="uint16"):
        finder.process(frames.astype(numpy.int32))
    with pytest.raises(ValueError, match=r"shape \(n, 48, 64\)"):
        finder.process(frames[:, :40])
    with pytest.raises(ValueError, match="frame_numbers"):
        finder.process(frames, [1, 2, 3])
    with pytest.raises(clustercore.ClusterCoreError, match="odd") as error:
        clustercore.Finder(48, 64, cluster_size=4)
    assert error.value.name == "CC_EINVAL" and error.value.code == -1
    with pytest.raises(ValueError, match="backend must be one of auto, cpu, cuda"):
        clustercore.Finder(48, 64, backend="gpu")
    with pytest.raises(TypeError, match="unknown setting"):
        clustercore.Finder(48, 64, sigma=3)
    with pytest.raises(ValueError, match="out of range"):
        clustercore.Finder(48, 64, threads=-1)
    with pytest.raises(clustercore.ClusterCoreError):
        finder.load_pedestal(tmp_path / "none.ped")
    (tmp_path / "bad.ped").write_bytes(b"not a pedestal")
    with pytest.raises(clustercore.ClusterCoreError) as error:
        finder.load_pedestal(tmp_path / "bad.ped")
    assert str(error.value) and error.value.name in ("CC_EFORMAT", "CC_EMISMATCH")
    untrained = clustercore.Finder(48, 64)
    with pytest.raises(clustercore.ClusterCoreError) as error:
        untrained.process(frames)
    assert error.value.name == "CC_ESTATE"
    with pytest.raises(ValueError, match="0 \\(good\\) and 1"):
        untrained.set_mask(numpy.full((48, 64), 2))
    untrained.close()
    with pytest.raises(ValueError, match="closed"):
        untrained.process(frames)


def test_a_failed_call_changes_nothing(trained):
    simulator, finder, pedestal = trained
    finder.load_pedestal(pedestal)
    before = finder.stats
    with pytest.raises(TypeError):
        finder.process(simulator.frames(2).astype(numpy.float32))
    assert finder.stats == before


def test_mask_keeps_centres_off_bad_pixels(trained):
    simulator, finder, pedestal = trained
    frames = simulator.frames(6)
    hits = clusters_of(trained, frames).array()
    bad = numpy.zeros((48, 64), bool)
    bad[hits["y"], hits["x"]] = True
    finder.load_pedestal(pedestal)  # the mask is part of the pedestal: after it
    finder.set_mask(bad)
    try:
        masked = finder.process(frames).array()
        assert 0 < len(masked) < len(hits)
        assert not bad[masked["y"], masked["x"]].any()
        assert numpy.array_equal(finder.mask, bad.astype(numpy.uint8))
    finally:
        finder.set_mask(None)
    assert not finder.mask.any()


def test_settings_round_trip(trained):
    finder = trained[1]
    settings = finder.settings
    assert settings["cluster_size"] == (3, 3) and settings["precision"] == "float"
    finder.configure(nsigma=6.5)
    assert finder.settings["nsigma"] == 6.5
    finder.configure(nsigma=settings["nsigma"])
    assert finder.backend in ("cpu", "cuda")
    assert finder.backend_description


def memory_in_use():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.skipif("address" in os.environ.get("CLUSTERCORE_SANITIZERS", ""),
                    reason="AddressSanitizer keeps freed memory in quarantine: "
                    "the plain build measures this")
def test_no_leak_over_10000_calls(trained):
    """Each call makes and frees a cluster list, copies it out, and fails
    once on bad input: memory after 10,000 calls is memory after 1,000."""
    simulator, finder, pedestal = trained
    finder.load_pedestal(pedestal)
    frames = simulator.frames(1)
    bad = frames.astype(numpy.int32)

    def calls(n):
        for _ in range(n):
            clusters = finder.process(frames)
            clusters.array()
            try:
                finder.process(bad)
            except TypeError:
                pass

    calls(1000)
    before = memory_in_use()
    calls(9000)
    grown = memory_in_use() - before
    assert grown < 1 << 20, "%d bytes more after 9,000 more calls" % grown


def test_common_mode_keyword_and_figures():
    """common_mode takes the library's names, and the figures come back
    per region: a simulated 30 ADU common mode is seen in every region."""
    sim = clustercore.Simulator(rows=50, cols=50, flux=20, seed=3,
                                common_mode="supercolumn", common_mode_rms=30)
    finder = clustercore.Finder(50, 50, pedestal_frames=40, backend="cpu",
                                common_mode="supercolumn")
    assert finder.settings["common_mode"] == "supercolumn"
    finder.train(sim.dark_frames(40))
    finder.process(sim.frames(20))
    regions = finder.common_mode()
    assert regions.dtype == clustercore.COMMON_MODE_DTYPE
    assert len(regions) == 4  # two supercolumns a half
    assert (regions["frames_estimated"] == 20).all()
    assert (regions["rms"] > 10).all()
    plain = clustercore.Finder(50, 50, backend="cpu")
    assert len(plain.common_mode()) == 0
    with pytest.raises(ValueError, match="common_mode"):
        clustercore.Finder(50, 50, common_mode="column")


def test_gain_keyword_map_and_refusals(tmp_path):
    """gain takes an array or a file, in either unit; the simulator's true
    map narrows the line it widened; bad maps are refused with the pixel."""
    sim = clustercore.Simulator(rows=60, cols=60, flux=40, seed=4, noise_min=5,
                                noise_max=8, gain_spread=0.05)
    truth = sim.gain_map()
    assert truth.shape == (60, 60) and 0.03 < truth.std() < 0.07
    dark, frames = sim.dark_frames(100), sim.frames(200)
    path = tmp_path / "gain.npy"
    clustercore.write_gain_map(path, truth.astype(numpy.float32))
    assert numpy.array_equal(clustercore.read_gain_map(path, 60, 60),
                             truth.astype(numpy.float32))
    widths = {}
    for name, gain in (("none", None), ("array", truth), ("file", path)):
        finder = clustercore.Finder(60, 60, pedestal_frames=100, backend="cpu",
                                    gain=gain)
        finder.train(dark)
        sums = clustercore.Spectrum(energy="sum", bins=200, min=0, max=2000)
        sums.add(finder.process(frames))
        widths[name] = sums.fit_peak(700, 900).sigma
        assert (finder.gain is None) == (gain is None)
    assert widths["array"] < 0.8 * widths["none"]
    assert abs(widths["file"] / widths["array"] - 1) < 0.01
    finder = clustercore.Finder(60, 60, backend="cpu", gain=100 * truth,
                                gain_unit="adu-per-kev")
    assert finder.gain[1] == "adu-per-kev"
    bad = truth.copy()
    bad[3, 4] = 0
    with pytest.raises(clustercore.ClusterCoreError, match=r"\(row 3, col 4\)"):
        finder.set_gain(bad)
    assert finder.gain[1] == "adu-per-kev"  # the map in force stays
    with pytest.raises(ValueError, match="shape"):
        finder.set_gain(truth[:10])
    with pytest.raises(ValueError, match="gain_unit"):
        finder.set_gain(truth, "keV")
    finder.set_gain(None)
    assert finder.gain is None


def test_gain_calibration_from_a_flat_field():
    """A flat field's single events give each pixel's gain: the map
    follows the simulator's within a few per cent; refusals name why."""
    sim = clustercore.Simulator(rows=32, cols=32, flux=60, seed=8, noise_min=5,
                                noise_max=8, gain_spread=0.05)
    finder = clustercore.Finder(32, 32, pedestal_frames=200, backend="cpu")
    finder.train(sim.dark_frames(200))
    calibration = clustercore.GainCalibration(32, 32, 600, 1000)
    for first in range(0, 20000, 2000):
        calibration.add(finder.process(sim.frames(2000, first=first)))
    assert calibration.counts().shape == (32, 32, 40)
    gain, quality, result = calibration.solve()
    good = quality == 0
    assert good.mean() > 0.95 and result["pixels_good"] == good.sum()
    ratio = gain[good] / sim.gain_map()[good]
    assert ratio.std() / ratio.mean() < 0.02
    absolute, _, _ = calibration.solve(unit="adu-per-kev", line_energy_kev=8.048)
    assert abs(numpy.median(absolute[good]) / 100 - 1) < 0.03
    with pytest.raises(clustercore.ClusterCoreError, match="line energy"):
        calibration.solve(unit="adu-per-kev")
    with pytest.raises(clustercore.ClusterCoreError, match="range"):
        clustercore.GainCalibration(32, 32, 1000, 600)


def test_finder_keeps_a_flat_fields_spectra():
    """The spectra a finder keeps while finding (on the GPU where one
    runs) are those its clusters give a GainCalibration, count for count;
    a calibration binned otherwise is refused."""
    sim = clustercore.Simulator(rows=32, cols=32, flux=60, seed=9, noise_min=5,
                                noise_max=8, gain_spread=0.05)
    finder = clustercore.Finder(32, 32, pedestal_frames=200)
    finder.train(sim.dark_frames(200))
    direct = clustercore.GainCalibration(32, 32, 600, 1000, events="sum")
    kept = clustercore.GainCalibration(32, 32, 600, 1000, events="sum")
    finder.set_gain_calibration(kept)
    for first in range(0, 4000, 1000):
        direct.add(finder.process(sim.frames(1000, first=first)))
    finder.take_gain_calibration(kept)
    assert kept.counts().sum() > 0
    numpy.testing.assert_array_equal(kept.counts(), direct.counts())
    with pytest.raises(clustercore.ClusterCoreError, match="otherwise"):
        finder.take_gain_calibration(clustercore.GainCalibration(32, 32, 600, 1000))
    finder.set_gain_calibration(None)
    with pytest.raises(clustercore.ClusterCoreError, match="no spectra"):
        finder.take_gain_calibration(kept)


def test_clusterfind_calibrates_as_the_library_does(clusterfind, tmp_path):
    """clusterfind --gain-calibrate writes the map and mask the library
    solves from the clusters it wrote."""
    gain, bad, clust = (tmp_path / name for name in ("gain.npy", "bad.npy", "run.clust"))
    run(clusterfind, "--simulate", 1000, "--flux", 4000, "--sim-noise", "5:8",
        "--sim-gain-spread", 0.05, "--pedestal-frames", 200, "--peak-range", "600:1000",
        "--gain-calibrate", gain, "--gain-mask", bad, "--gain-min-photons", 5,
        "--output", clust)
    calibration = clustercore.GainCalibration(400, 400, 600, 1000, min_photons=5)
    with clustercore.ClustReader(clust) as reader:
        for clusters in reader:
            calibration.add(clusters)
    want, quality, _ = calibration.solve()
    assert (quality == 0).sum() > 10000
    numpy.testing.assert_array_equal(numpy.load(gain), want)
    numpy.testing.assert_array_equal(numpy.load(bad), quality != 0)


def test_pedestal_frames_and_the_analog_image():
    """docs/spec.md §2.7 and §4.8 from Python: dark frames of 99 and 101
    train an 8 x 8 pedestal of 100, frames of 101 with a photon of 200 at
    (1, 1) are found and summed into the analog image, pedestal frames
    update every pixel and add nothing to it."""
    dark = numpy.where(numpy.arange(4)[:, None, None] % 2, 101, 99).astype("u2")
    dark = numpy.broadcast_to(dark, (4, 8, 8)).copy()
    frames = numpy.full((2, 8, 8), 101, "u2")
    frames[:, 1, 1] = 200
    finder = clustercore.Finder(8, 8, pedestal_frames=4, precision="double",
                                backend="cpu")
    finder.add_pedestal(dark[:3])   # trains
    finder.add_pedestal([dark[3]])  # and makes the pedestal ready
    assert finder.stats["state"] == "ready" and finder.stats["frames_pedestal"] == 0
    finder.set_analog()
    finder.process(frames)
    finder.add_pedestal(frames[:1])  # the photon's pixel moves too
    sums, summed = finder.take_analog()
    assert summed == 2
    assert sums[6, 6] == 1.75 and sums[1, 1] == 200.0
    assert finder.stats["frames_pedestal"] == 1
    mean, _ = finder.pedestal_maps()
    assert mean[1, 1] > 100  # 100 + 100 / 4
    again, none = finder.take_analog()
    assert none == 0 and not again.any()
    finder.set_analog(False)
    with pytest.raises(clustercore.ClusterCoreError, match="turn it on"):
        finder.take_analog()
    with pytest.raises(ValueError, match="shape"):
        finder.add_pedestal(numpy.zeros((1, 4, 4), "u2"))
