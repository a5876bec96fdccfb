# SPDX-License-Identifier: BSD-3-Clause
"""clusterfind-batch checks its settings with clusterfind's own parsing on
a simulated run, leaving out those of raw runs only (--chip), whose
values it checks itself; its reduce fits the summed spectrum as
clusterfind fits a run's."""
import pytest

from clustercore import analysis, batch, outputs
from conftest import run


def test_settings_of_raw_runs_pass_the_simulated_check(clusterfind):
    batch._check_settings(clusterfind, ["--chip", "moench04", "--nsigma", "4"])
    batch._check_settings(clusterfind, ["--nsigma=4", "--chip=moench03"])
    with pytest.raises(batch.BatchError, match="--chip 'moench05'"):
        batch._check_settings(clusterfind, ["--chip", "moench05"])
    with pytest.raises(batch.BatchError, match="--chip ''"):
        batch._check_settings(clusterfind, ["--chip"])
    with pytest.raises(batch.BatchError, match="refuses the settings"):
        batch._check_settings(clusterfind, ["--chip", "moench03", "--nsgima", "4"])


def test_reduce_fits_a_sum_as_clusterfind_fits_a_run(clusterfind, raw_run, tmp_path):
    """The batch's reduce fits the summed spectrum with the library's fit:
    the sum of one run gives that run's line, value for value."""
    dark, data = raw_run
    run(clusterfind, "--pedestal", dark, "--data", data, "--spectrum", tmp_path / "s.csv")
    one = outputs.read_spectrum(tmp_path / "s.csv")
    assert one.peak is not None
    assert outputs.PEAK_NAMES == analysis.Peak._fields
    line = batch._fit_line(outputs.sum_spectra([one]), ["--nsigma", "5"])
    assert line == {"peak": one.peak}
    double = batch._fit_line(outputs.sum_spectra([one, one]), [])["peak"]
    assert double["position"] == pytest.approx(one.peak["position"], abs=1e-6)
    assert double["counts"] == pytest.approx(2 * one.peak["counts"], rel=1e-6)
    narrow = batch._fit_line(outputs.sum_spectra([one]), ["--peak-range=0:1"])
    assert narrow == {"not_fitted": "no line converged in the range fitted"}
