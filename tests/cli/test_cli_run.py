"""The `xcore` command line end to end through subprocess: every registered method on its bundled
sample, the files it writes, exit codes 0/2/1 and the app's messages for bad data and settings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from xcore.cli import main
from xcore.data import load
from xcore.errors import ConfigError, DataError
from xcore.methods import REGISTRY, Run

ROOT = Path(__file__).resolve().parents[2]
METHODS = list(REGISTRY)
QUICK = {"esms": ["iterations=4", "rules_per_model=5"],
         "mln": ["T=3", "n_samples=300", "burn_in=50", "explainers=mln:m-explain,mln:i-explain,mln:lime"],
         "plkb": ["explain_rows=10"],
         "drm": ["folds=2", "max_draws=500", "max_epochs=40"]}  # ten trains cross-fit: one DRM per fold
"""Small --set overrides so the suite stays fast (a method not listed runs with its sample's defaults)."""

pytestmark = pytest.mark.xdist_group("cli")


def xcore(*args: str, cwd: Path | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """`python -m xcore ARGS` in a fresh process (this worktree's package first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    return subprocess.run([sys.executable, "-m", "xcore", *args], cwd=cwd or ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module", params=METHODS)
def method_run(request, tmp_path_factory):
    """(method, output folder, process) of `xcore run METHOD sample:SAMPLE --set ...` for every method."""
    key = request.param
    out = tmp_path_factory.mktemp(f"run_{key}")
    sets = [a for s in QUICK.get(key, []) for a in ("--set", s)]
    proc = xcore("run", key, f"sample:{REGISTRY[key].sample}", *sets, "--out", str(out))
    return key, out, proc


def test_run_writes_every_file_and_they_agree(method_run):
    key, out, proc = method_run
    assert proc.returncode == 0, proc.stderr
    for name in ("run.json", "predictions.csv", "explanations.json", "metrics.json", "report.html"):
        assert (out / name).stat().st_size > 0, name
        assert f"wrote {out / name}" in proc.stdout
    run = Run.from_bundle((out / "run.json").read_text())
    assert run.method == key and run.dataset == REGISTRY[key].sample
    settings = run.settings  # the bundle's settings come back as the method's Settings type
    assert isinstance(settings, REGISTRY[key].settings_type)
    for pair in QUICK.get(key, []):
        field, value = pair.split("=")
        got = getattr(settings, field)
        assert (list(got) == value.split(",")) if isinstance(got, tuple) else str(got) == value
    preds = pd.read_csv(out / "predictions.csv")
    assert list(preds.columns[:3]) == ["target", "prediction", "truth"]
    assert preds["target"].astype(str).tolist() == run.predictions["target"].astype(str).tolist()
    exps = json.loads((out / "explanations.json").read_text())
    assert set(exps) == set(run.explanations) and exps
    assert all(len(v["explanations"]) == len(run.explanations[n]) for n, v in exps.items())
    assert json.loads((out / "metrics.json").read_text()) == pytest.approx(run.metrics)
    html = (out / "report.html").read_text()
    for section in ("data", "settings", "metrics", "predictions", "explanations"):
        assert f'<section id="{section}">' in html
    assert html.count('class="card"') >= 1
    # non-TTY stderr: plain progress lines, the last at 100%
    assert "loading sample:" in proc.stderr and "100%" in proc.stderr and "\r" not in proc.stderr


def test_explain_prints_the_ranked_table_and_text(method_run):
    key, out, _ = method_run
    run = Run.from_bundle((out / "run.json").read_text())
    name = next(n for n, s in run.explanations.items() if len(s) and s[0].items)
    exp = run.explanations[name][0]
    proc = xcore("explain", str(out / "run.json"), exp.target, "--explainer", name, "-k", "3")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{exp.target} — {name}")
    assert "rank" in proc.stdout and exp.items[0].text[:40] in proc.stdout
    assert "strongest reasons" in proc.stdout or "explains" in proc.stdout


def test_report_rebuilds_the_same_report_from_the_bundle(method_run):
    key, out, _ = method_run
    again = out / "again.html"
    proc = xcore("report", str(out / "run.json"), "--out", str(again))
    assert proc.returncode == 0, proc.stderr
    a, b = (out / "report.html").read_text(), again.read_text()
    # the same cards and predictions table; only the data summary (not in the bundle) differs
    cards = lambda s: s[s.index('<section id="predictions">'):]  # noqa: E731
    assert cards(a) == cards(b)


def test_methods_lists_every_method_with_settings_and_defaults():
    proc = xcore("methods")
    assert proc.returncode == 0, proc.stderr
    for key in METHODS:
        spec = REGISTRY[key]
        assert f"{key}: {spec.title}" in proc.stdout and f"sample:{spec.sample}" in proc.stdout
        for name in spec.settings_type.model_fields:
            assert f"    {name} " in proc.stdout
    assert "default 0.25" in proc.stdout or METHODS != ["esms", "mln", "plkb"]


def test_bad_data_file_exits_2_with_the_apps_message(tmp_path):
    bad = tmp_path / "people.csv"
    bad.write_text("age,label\n30,yes\n41,no,extra\n")
    with pytest.raises(DataError) as info:  # what the Data page shows (st.error(str(e)))
        load(str(bad))
    proc = xcore("run", "plkb", str(bad), "-q")
    assert proc.returncode == 2
    assert f"xcore: error: {info.value}" in proc.stderr and "line 3" in proc.stderr
    assert "Traceback" not in proc.stderr
    missing = xcore("run", "plkb", str(tmp_path / "nope.csv"), "-q")
    assert missing.returncode == 2 and "nope.csv: no such file or folder" in missing.stderr


def in_process(capsys, *args: str) -> tuple[int, str]:
    """(exit code, stderr) of the command line's `main` run in this process: the same code path as the
    process (`python -m xcore` is `sys.exit(main())`) without a fresh interpreter's imports per case."""
    capsys.readouterr()
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's usage errors
        code = int(e.code or 0)
    return code, capsys.readouterr().err


def test_bad_settings_exit_2_naming_the_field(tmp_path, capsys):
    spec = REGISTRY["esms"]
    with pytest.raises(ConfigError) as info:  # what the page's guarded(Settings, ...) shows
        spec.settings_type.parse({"target": "rating", "gamma": "2"})
    proc = xcore("run", "esms", "sample:lastfm_demo", "--set", "gamma=2", "-q")  # a real process: its exit code
    assert proc.returncode == 2 and f"xcore: error: {info.value}" in proc.stderr
    code, err = in_process(capsys, "run", "esms", "sample:lastfm_demo", "--set", "no_such=1", "-q")
    assert code == 2 and err.startswith("xcore: error: no_such:")
    cfg = tmp_path / "run.yaml"
    cfg.write_text("iterations: 4\nalpha: 7\n")
    code, err = in_process(capsys, "run", "esms", "sample:lastfm_demo", "--config", str(cfg), "-q")
    assert code == 2 and "alpha:" in err and str(cfg) in err
    cfg.write_text("iterations: 4\nalpha: [0.1\n")
    code, err = in_process(capsys, "run", "esms", "sample:lastfm_demo", "--config", str(cfg), "-q")
    assert code == 2 and f"{cfg}, line 3: invalid YAML" in err
    for args in (("run", "nope", "sample:lastfm_demo"), ("run", "esms", "sample:nope"),
                 ("explain", str(cfg), "x"), ("run", "esms", "sample:lastfm_demo", "--set", "gamma")):
        code, err = in_process(capsys, *args, *(("-q",) if args[0] == "run" else ()))
        assert code == 2 and err.startswith("xcore: error:"), (args, err)


def test_yaml_config_and_set_go_through_the_settings_class(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("explain_rows: 3\nk: 3\nkb: direct\n")
    proc = xcore("run", "plkb", "sample:titanic_like", "--config", str(cfg), "--set", "k=1",
                 "--set", "drop=name,ticket", "--out", str(tmp_path / "o"), "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""  # --quiet
    run = Run.from_bundle((tmp_path / "o" / "run.json").read_text())
    assert run.settings.kb == "direct" and run.settings.k == 1 and run.settings.explain_rows == 3
    assert list(run.settings.drop) == ["name", "ticket"]
    assert len(run.explanations["plkb:decisive"]) == 3  # explain_rows from the YAML file


def test_pyproject_declares_the_console_script():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["xcore"] == "xcore.cli:main"
    from xcore.cli import main

    assert callable(main)


def test_progress_is_a_bar_when_stderr_is_a_terminal(tmp_path):
    import pty
    import threading

    master, slave = pty.openpty()
    chunks: list[bytes] = []

    def drain() -> None:  # read while the child writes, so a full terminal buffer never blocks it
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "xcore", "run", "plkb", "sample:titanic_like", "--set",
                           "explain_rows=3", "--out", str(tmp_path)], env=env, stdout=subprocess.PIPE,
                          stderr=slave, timeout=300)
    os.close(slave)
    reader.join(timeout=30)
    os.close(master)
    text = b"".join(chunks).decode()
    assert proc.returncode == 0
    assert "\r" in text and "100%|" in text  # a tqdm bar redrawn in place, to its end
    assert "<" in text.split("100%|", 1)[1].split("\n", 1)[0]  # elapsed<remaining: the ETA


@pytest.mark.slow
def test_nlil_link_prediction_prints_filtered_mrr_and_progress_on_stderr(tmp_path):
    p = xcore("run", "nlil", "sample:family", "--set", "eval=link-prediction", "--set", "kg_epochs=1",
              "--set", "kg_queries=500", "--out", str(tmp_path / "lp"))
    assert p.returncode == 0, p.stderr
    metrics = dict(line.split() for line in p.stdout.splitlines() if line.strip() and not line.startswith("wrote"))
    assert set(metrics) >= {"mrr", "hits@1", "hits@3", "hits@10"} and 0 < float(metrics["mrr"]) <= 1
    assert "epoch 1/1" in p.stderr
