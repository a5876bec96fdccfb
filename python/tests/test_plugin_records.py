# SPDX-License-Identifier: BSD-3-Clause
"""clustercore.plugin_records, the table the Bluesky and BEC devices are
built from, against db/NDClusterCUDA.template: every record is in the
table once, as the access, value type and enum states the template gives
it; nothing in the table is missing from the template."""
import os
import re

import pytest

from clustercore import plugin_records as records
from conftest import SOURCE

TEMPLATE = os.path.join(SOURCE, "db", "NDClusterCUDA.template")
STATE_FIELDS = ("ZRST", "ONST", "TWST", "THST", "FRST", "FVST", "SXST", "SVST")


def template_records():
    """{suffix: (record type, fields)} of the template."""
    if not os.path.exists(TEMPLATE):
        pytest.skip("no %s (CLUSTERCORE_SOURCE names the source tree)" % TEMPLATE)
    text = open(TEMPLATE).read()
    found = {}
    for match in re.finditer(r'record\((\w+),\s*"\$\(P\)\$\(R\)([^"]+)"\)\s*\{(.*?)\n\}',
                             text, re.S):
        kind, suffix, body = match.groups()
        found[suffix] = (kind, dict(re.findall(r'field\((\w+),\s*"([^"]*)"\)', body)))
    return found


def value_of(kind, fields):
    """The table's value for a record: its states, or its type."""
    states = tuple(fields[f] for f in STATE_FIELDS if f in fields)
    states = states or tuple(fields[f] for f in ("ZNAM", "ONAM") if f in fields)
    if states:
        return states
    if kind in ("ao", "ai"):
        return float
    if kind in ("longout", "longin"):
        return int
    if kind == "stringin" or fields.get("FTVL") == "CHAR":
        return str
    assert fields.get("FTVL") == "DOUBLE", "a waveform of %s" % fields.get("FTVL")
    return records.ARRAY


def table_records():
    """{suffix: value} of every PV the table names, read-backs included."""
    named = {}
    for record in records.SETTINGS:
        named[record.suffix] = record.value
        named[record.suffix + "_RBV"] = record.value
    for record in records.WRITTEN + records.COMMANDS + records.READINGS:
        named[record.suffix] = record.value
    return named


def test_every_record_is_in_the_table():
    missing = sorted(set(template_records()) - set(table_records()))
    assert not missing, "records of the template not in plugin_records: %s" % missing


def test_the_table_names_only_records():
    extra = sorted(set(table_records()) - set(template_records()))
    assert not extra, "plugin_records names PVs the template lacks: %s" % extra


def test_types_and_states_are_the_templates():
    found = template_records()
    for suffix, value in table_records().items():
        assert value == value_of(*found[suffix]), suffix


def test_access_is_the_templates():
    found = template_records()
    writers = ("ao", "longout", "bo", "mbbo")
    for record in records.SETTINGS + records.WRITTEN + records.COMMANDS:
        kind, fields = found[record.suffix]
        assert kind in writers or fields.get("DTYP") == "asynOctetWrite", record.suffix
    for record in records.READINGS:
        kind, fields = found[record.suffix]
        assert record.suffix.endswith("_RBV") and kind not in writers, record.suffix
        assert fields.get("DTYP") != "asynOctetWrite", record.suffix
    for record in records.COMMANDS:
        assert found[record.suffix][0] == "bo" and record.kind == "omitted", record.suffix


def test_attributes_are_unique_and_kinds_known():
    every = records.SETTINGS + records.WRITTEN + records.COMMANDS + records.READINGS
    names = [record.attribute for record in every]
    assert len(names) == len(set(names))
    assert {record.kind for record in every} <= {"hinted", "normal", "config", "omitted"}
