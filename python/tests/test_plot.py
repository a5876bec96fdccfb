# SPDX-License-Identifier: BSD-3-Clause
"""clusterfind-plot draws a run's outputs as one report, and refuses files
that are not clusterfind's with a message and no picture."""
import numpy
import pytest

from clustercore import outputs, plot
from conftest import run

pytest.importorskip("matplotlib")
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run_outputs(tmp_path_factory, raw_run):
    from conftest import program
    where = tmp_path_factory.mktemp("outputs")
    dark, data = raw_run
    common = [program("tools/clusterfind"), "--pedestal", dark, "--data", data]
    run(*common, "--eta-calibrate", where / "cal.eta")
    run(*common, "--eta-map", where / "cal.eta", "--image", where / "image.npy",
        "--spectrum", where / "spectrum.csv", "--hitmap", where / "hitmap.npy",
        "--noise", where / "noise.npy")
    return where


def test_a_report_of_a_runs_directory(run_outputs, tmp_path):
    assert plot.main([str(run_outputs), "-o", str(tmp_path / "r.png"), "--gain", "100",
                      "--title", "run 1"]) == 0
    assert (tmp_path / "r.png").read_bytes()[:8] == PNG
    found = outputs.find_outputs([str(run_outputs)])
    assert set(found) == {"spectrum", "hitmap", "image", "noise"}
    assert plot.load(found)["subpixels"] == 5


def test_a_report_of_some_files_and_a_region(run_outputs, tmp_path):
    assert plot.main([str(run_outputs / "spectrum.csv"), str(run_outputs / "noise.npy"),
                      "-o", str(tmp_path / "r.png"), "--region", "100:200,50:150"]) == 0
    assert (tmp_path / "r.png").read_bytes()[:8] == PNG


@pytest.mark.parametrize("content, message", [
    (b"x,y\n1,2\n", "not a clusterfind spectrum"),
    (b"low,high,count\n0,1,5\n", "no underflow and overflow"),
    (b"low,high,count\n0,1,x\n-inf,0,0\n1,inf,0\n", ":2: not a low,high,count line"),
])
def test_a_bad_spectrum_is_refused(tmp_path, capsys, content, message):
    (tmp_path / "spectrum.csv").write_bytes(content)
    assert plot.main([str(tmp_path / "spectrum.csv"), "-o", str(tmp_path / "r.png")]) == 1
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r.png").exists()


def test_maps_that_do_not_fit_are_refused(tmp_path, capsys):
    numpy.save(tmp_path / "hitmap.npy", numpy.zeros((4, 4), numpy.uint32))
    numpy.save(tmp_path / "noise.npy", numpy.zeros((5, 4)))
    numpy.save(tmp_path / "image.npy", numpy.zeros((3, 3), numpy.uint32))
    (tmp_path / "notes.txt").write_text("hello")
    for files, message in (([tmp_path / "hitmap.npy", tmp_path / "noise.npy"], "different shapes"),
                           ([tmp_path / "hitmap.npy", tmp_path / "image.npy"], "S-fold"),
                           ([tmp_path / "notes.txt"], "not one of clusterfind's outputs"),
                           ([tmp_path / "none.npy"], "no such file")):
        assert plot.main([str(f) for f in files] + ["-o", str(tmp_path / "r.png")]) == 1
        assert message in capsys.readouterr().err
    assert not (tmp_path / "r.png").exists()


def test_spectra_sum_and_write_back_as_clusterfind_does(run_outputs, tmp_path):
    one = outputs.read_spectrum(run_outputs / "spectrum.csv")
    total = outputs.sum_spectra([one, one])
    assert numpy.array_equal(total.counts, 2 * one.counts)
    assert total.peak is None  # a line belongs to the counts it was fitted to
    outputs.write_spectrum(tmp_path / "s.csv", one)
    assert (tmp_path / "s.csv").read_bytes() == (run_outputs / "spectrum.csv").read_bytes()

