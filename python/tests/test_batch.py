# SPDX-License-Identifier: BSD-3-Clause
"""clusterfind-batch checks its settings with clusterfind's own parsing on
a simulated run, leaving out those of raw runs only (--chip), whose
values it checks itself."""
import pytest

from clustercore import batch


def test_settings_of_raw_runs_pass_the_simulated_check(clusterfind):
    batch._check_settings(clusterfind, ["--chip", "moench04", "--nsigma", "4"])
    batch._check_settings(clusterfind, ["--nsigma=4", "--chip=moench03"])
    with pytest.raises(batch.BatchError, match="--chip 'moench05'"):
        batch._check_settings(clusterfind, ["--chip", "moench05"])
    with pytest.raises(batch.BatchError, match="--chip ''"):
        batch._check_settings(clusterfind, ["--chip"])
    with pytest.raises(batch.BatchError, match="refuses the settings"):
        batch._check_settings(clusterfind, ["--chip", "moench03", "--nsgima", "4"])
