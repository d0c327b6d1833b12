"""Issue 29's fuzz case: grounding with the size guard off (`limit=None`) on a 52-literal rule grew the
process until DuckDB's OutOfMemoryException escaped. DuckDB's memory is now bounded (spilling to a
private folder) and a rule outgrowing it is a `GroundingOutOfMemory` (a `GroundingTooLarge`) saying
what to change."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import duckdb
import numpy as np
import pytest

import xcore.logic.grounding as grounding
from xcore.data.samples import load_sample
from xcore.errors import ConfigError, GroundingTooLarge
from xcore.logic.grounding import GroundingOutOfMemory, ground
from xcore.runtime import DUCKDB_MEMORY_ENV, new_duckdb, parse_bytes

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, resource, sys, time
from xcore.data.samples import load_sample
from xcore.logic.grounding import ground
body = " & ".join(f"friends(A{i}, A{i + 1})" for i in range(52))
t = time.perf_counter()
try:
    ground([f"1.0: {body} -> smokes(A0)"], load_sample("friends_smokers"), limit=None)
    outcome = {"error": None}
except BaseException as e:
    outcome = {"error": type(e).__name__, "mro": [c.__name__ for c in type(e).__mro__], "message": str(e)}
outcome["seconds"] = time.perf_counter() - t
outcome["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(outcome))
"""


def _cap_address_space() -> None:
    """Keep a runaway child from taking the shared machine's memory (the code before the fix grew
    by about 700 MB a second): it fails at 6 GB of address space instead."""
    resource.setrlimit(resource.RLIMIT_AS, (6 << 30, 6 << 30))


@pytest.mark.slow
def test_a_52_literal_rule_without_the_guard_stops_with_an_xcore_error_within_the_memory_limit():
    env = {**os.environ, "PYTHONPATH": str(ROOT), DUCKDB_MEMORY_ENV: "256MB"}
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300, preexec_fn=_cap_address_space)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["error"] == "GroundingOutOfMemory", out
    assert "GroundingTooLarge" in out["mro"] and "XcoreError" in out["mro"]
    message = out["message"]
    assert "256.0 MB" in message and f"{DUCKDB_MEMORY_ENV}=" in message and "limit=5_000_000" in message
    assert "friends(A0, A1) & friends(A1, A2)" in message and len(message) < 1000
    assert out["peak_mb"] < 1200, out  # the result stopped at a third of 256 MB, DuckDB within its limit


def test_duckdbs_own_out_of_memory_error_becomes_the_xcore_error(monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise duckdb.OutOfMemoryException("Out of Memory Error: failed to allocate data of size 2.3 GiB")

    monkeypatch.setattr(grounding, "_ground_plan", out_of_memory)
    with pytest.raises(GroundingOutOfMemory, match=f"{DUCKDB_MEMORY_ENV}=16GB") as info:
        ground(["1.0: friends(A, B) & smokes(A) -> smokes(B)"], load_sample("friends_smokers"), limit=None)
    assert isinstance(info.value, GroundingTooLarge) and "friends(A, B) & smokes(A)" in str(info.value)


def test_fetching_in_batches_gives_the_same_ground_rules_as_fetching_at_once(monkeypatch):
    ds = load_sample("friends_smokers")
    rules = ["1.0: friends(A, B) & friends(B, C) & smokes(A) -> smokes(C)", "1.0: smokes(A) -> cancer(A)"]
    at_once = ground(rules, ds)  # the default cap fits the budget: one fetch
    monkeypatch.setattr(grounding, "FETCH_BYTES", 64)  # tiny batches (2,048 rows each at least)
    batched = ground(rules, ds, limit=None)
    for a, b in zip(at_once, batched):
        assert a.n > 0 and np.array_equal(a.atom_ids, b.atom_ids) and np.array_equal(a.bindings, b.bindings)


def test_duckdb_is_bounded_and_spills_to_its_own_folder(monkeypatch, tmp_path):
    monkeypatch.setenv(DUCKDB_MEMORY_ENV, "300MB")
    monkeypatch.chdir(tmp_path)
    con = new_duckdb(threads=1)
    memory, folder, threads = con.sql("SELECT current_setting('memory_limit'), current_setting('temp_directory'), "
                                      "current_setting('threads')").fetchall()[0]
    assert memory == "286.0 MiB"  # 300 MB
    assert "xcore-duckdb-" in folder and not folder.startswith(str(tmp_path)) and threads == 1
    con.close()
    assert parse_bytes("8GB", "x") == 8 * 10**9 and parse_bytes("512 MiB", "x") == 512 * 2**20
    for bad in ("lots", "-1GB", "10", "1.5XB"):
        with pytest.raises(ConfigError, match="XCORE_DUCKDB_MEMORY"):
            parse_bytes(bad, DUCKDB_MEMORY_ENV)
