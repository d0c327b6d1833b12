"""Command line of the study mode: `xcore study build|publish|links|serve|simulate|responses|report|drive`
(also `python -m xcore.study ...`)."""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

from xcore.errors import ConfigError, XcoreError
from xcore.methods.base import Run
from xcore.study.analysis import analyse
from xcore.study.build import ConditionSource, build_study, pick_items
from xcore.study.definition import TEMPLATES, Study
from xcore.study.export import responses_csv
from xcore.study.simulate import simulate
from xcore.study.store import StudyStore, as_url

TEMPLATE_KEYS = {
    "ess": "Explanation Satisfaction Scale (8 items)",
    "iexplain": "I-Explain: usefulness of relational and non-relational parts",
    "reasons": "Usefulness of each of the top 3 reasons",
    "attention": "Attention check (every 4th item)",
    "comment": "Free-text comment",
}


def parse_dist(values: list[str]) -> dict[str, list[float]]:
    """`A=0.1,0.2,0.4,0.2,0.1` flags -> {"A": [...]}."""
    out = {}
    for v in values:
        code, _, probs = v.partition("=")
        try:
            out[code.strip()] = [float(x) for x in probs.split(",")]
        except ValueError:
            raise ConfigError(f"bad distribution {v!r}: use CODE=p1,p2,...", field="dist") from None
    return out


def _store(url: str | None, read_only: bool = False) -> StudyStore:
    """The study database at `url` (default: $XCORE_STUDY_DB or the file beside the app)."""
    return StudyStore(url, read_only=read_only)


def cmd_build(a: argparse.Namespace) -> None:
    """Build a study definition file from run bundles."""
    runs: dict[str, Run] = {}
    sources = []
    for spec in a.condition:
        path, _, explainer = spec.partition("=")
        if path not in runs:
            runs[path] = Run.from_bundle(Path(path).read_bytes())
        sources.append(ConditionSource(Path(path).name, runs[path], explainer))
    targets = pick_items(sources, a.items, a.select, seed=a.seed, chosen=a.target or ())
    questions = []
    for key in a.templates.split(","):
        if key not in TEMPLATE_KEYS:
            raise ConfigError(f"unknown template {key!r}; choose from {', '.join(TEMPLATE_KEYS)}", field="templates")
        questions += list(TEMPLATES[TEMPLATE_KEYS[key]]())
    study = build_study(a.id, a.title, sources, targets, questions, design=a.design, seed=a.seed)
    Path(a.out).write_text(study.to_json())
    print(f"wrote {a.out}: {len(study.items)} items, {len(study.conditions)} conditions, digest {study.digest()[:16]}")


def cmd_publish(a: argparse.Namespace) -> None:
    """Publish (freeze) a study definition file."""
    study = Study.from_json(Path(a.definition).read_bytes())
    print(f"published {study.id} ({_store(a.db).publish(study)[:16]})")


def cmd_links(a: argparse.Namespace) -> None:
    """Enrol participants and print their links."""
    for token in _store(a.db).add_participants(a.study, a.n):
        print(f"{a.base_url.rstrip('/')}/?study={a.study}&p={token}")


def cmd_simulate(a: argparse.Namespace) -> None:
    """Fill a study with synthetic participants from known rating distributions."""
    store = _store(a.db)
    if a.definition:
        store.publish(Study.from_json(Path(a.definition).read_bytes()))
    tokens = simulate(store, a.study, a.participants, parse_dist(a.dist), seed=a.seed,
                      attention_failure=a.attention_failure)
    print(f"simulated {len(tokens)} participants in {a.study}")


def cmd_responses(a: argparse.Namespace) -> None:
    """Export the raw responses as CSV."""
    Path(a.out).write_text(responses_csv(_store(a.db, read_only=True), a.study), encoding="utf-8", newline="")
    print(f"wrote {a.out}")


def cmd_report(a: argparse.Namespace) -> None:
    """Write the one-file HTML analysis report and print the tests."""
    # the report's figures import plotly: only for `xcore study report`
    from xcore.study.report import html_report

    store = _store(a.db, read_only=True)
    analysis = analyse(store.study(a.study), store.responses(a.study), seed=a.seed)
    Path(a.out).write_text(html_report(analysis), encoding="utf-8")
    print(analysis.tests.to_string(index=False))
    print(f"wrote {a.out}")


SERVE_OPTIONS = (
    ("server.headless", "true"), ("client.showErrorDetails", "none"), ("client.toolbarMode", "viewer"),
    ("server.fileWatcherType", "none"), ("server.runOnSave", "false"), ("server.enableStaticServing", "false"),
    ("server.enableXsrfProtection", "true"), ("server.maxUploadSize", "1"), ("browser.gatherUsageStats", "false"),
)
"""Streamlit settings of the participant-only server: no error details, tracebacks or developer menu in the
browser, no file watching, no static files, XSRF protection on."""


def participant_app_path() -> Path:
    """study_app.py (the participant-only app) of the source checkout this package runs from."""
    candidate = Path(__file__).resolve().parents[2] / "study_app.py"
    if not candidate.is_file():
        raise XcoreError("study_app.py was not found next to the xcore package: serving participants needs a "
                         "source checkout (git clone, then pip install -e .)")
    return candidate


def serve_command(a: argparse.Namespace) -> list[str]:
    """The streamlit command line of the participant-only server."""
    command = [sys.executable, "-m", "streamlit", "run", str(participant_app_path()),
               "--server.port", str(a.port), "--server.address", a.address]
    for key, value in SERVE_OPTIONS:
        command += [f"--{key}", value]
    return command


def cmd_serve(a: argparse.Namespace) -> int:
    """Serve only the participant view (what participant links should point at)."""
    command = serve_command(a)
    env = dict(os.environ)
    if a.db:
        env["XCORE_STUDY_DB"] = as_url(a.db)
    if a.dry_run:
        print(shlex.join(command))
        return 0
    StudyStore(env.get("XCORE_STUDY_DB")).dispose()  # fail here, with the reason, not in a participant's browser
    print(f"participant-only server on http://{a.address}:{a.port}/ (participant links: "
          f"http://HOST:{a.port}/?study=ID&p=TOKEN)", flush=True)
    return subprocess.call(command, cwd=participant_app_path().parent, env=env)


def cmd_drive(a: argparse.Namespace) -> None:
    """One participant answering every remaining screen, one transaction each, printing `saved <pos>`
    after each commit (the crash test kills this process and starts it again)."""
    session = _store(a.db).participant(a.study, a.token)
    session.consent()
    _, start = session.progress()
    for pos in range(start, session.total):
        screen = session.screen(pos)
        answers = {q.id: (q.expected if q.kind == "attention" else "" if q.kind == "free_text"
                          else 1 + (pos % q.scale)) for q in screen.questions}
        session.submit(pos, answers, 1000 + pos)
        print(f"saved {pos}", flush=True)
        time.sleep(a.delay)
    print("done", flush=True)


def _db(sp: argparse.ArgumentParser) -> None:
    """The --db flag every storage command takes."""
    sp.add_argument("--db", default=None, help="SQLAlchemy URL or SQLite file (default: $XCORE_STUDY_DB "
                                                "or xcore_study.sqlite beside the app)")


def _add_build(sub: argparse._SubParsersAction) -> None:
    """`build`: a study definition file from run bundles."""
    b = sub.add_parser("build", help="build a study definition file from run bundles")
    b.add_argument("--condition", action="append", required=True, help="RUN_BUNDLE.json=EXPLAINER (repeat)")
    b.add_argument("--id", required=True)
    b.add_argument("--title", default="Which explanation helps?")
    b.add_argument("--items", type=int, default=12)
    b.add_argument("--select", choices=["random", "stratified", "hand"], default="random")
    b.add_argument("--target", action="append", help="hand-picked target (repeat)")
    b.add_argument("--design", choices=["between", "within"], default="between")
    b.add_argument("--templates", default="iexplain,attention", help=f"comma list of {', '.join(TEMPLATE_KEYS)}")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--out", required=True)
    b.set_defaults(fn=cmd_build)


def _add_sharing(sub: argparse._SubParsersAction) -> None:
    """`publish`, `links` and `serve`: what puts a study in front of participants."""
    s = sub.add_parser("publish", help="publish (freeze) a study definition file")
    _db(s)
    s.add_argument("--definition", required=True)
    s.set_defaults(fn=cmd_publish)

    s = sub.add_parser("links", help="enrol participants and print their links")
    _db(s)
    s.add_argument("--study", required=True)
    s.add_argument("-n", type=int, default=1)
    s.add_argument("--base-url", default="http://localhost:8501")
    s.set_defaults(fn=cmd_links)

    s = sub.add_parser("serve", help="serve only the participant view (run this for real participants; the "
                                     "researcher dashboard runs separately with `xcore app`)")
    _db(s)
    s.add_argument("--port", type=int, default=8502)
    s.add_argument("--address", default="0.0.0.0", help="address to listen on (default all)")
    s.add_argument("--dry-run", action="store_true", help="print the streamlit command instead of running it")
    s.set_defaults(fn=cmd_serve)


def _add_answers(sub: argparse._SubParsersAction) -> None:
    """`simulate`, `responses`, `report` and `drive`: answers written, read and analysed."""
    s = sub.add_parser("simulate", help="fill a study with synthetic participants from known rating distributions")
    _db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--definition", help="publish this definition file first")
    s.add_argument("--participants", type=int, default=30)
    s.add_argument("--dist", action="append", required=True, help="CODE=p1,...,p5 (one per condition)")
    s.add_argument("--attention-failure", type=float, default=0.0)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_simulate)

    s = sub.add_parser("responses", help="export raw responses as CSV")
    _db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)
    s.set_defaults(fn=cmd_responses)

    s = sub.add_parser("report", help="write the one-file HTML analysis report")
    _db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("drive", help="answer as one participant, one screen at a time (crash-test driver)")
    _db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--delay", type=float, default=0.0)
    s.set_defaults(fn=cmd_drive)


def parser(prog: str = "python -m xcore.study") -> argparse.ArgumentParser:
    """The argument parser of every study subcommand."""
    p = argparse.ArgumentParser(prog=prog, description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_add_build, _add_sharing, _add_answers):
        add(sub)
    return p


def main(argv: list[str] | None = None, prog: str = "python -m xcore.study") -> int:
    """Run a study command; exit code 0, or 2 with the reason on a refused operation or a file error."""
    a = parser(prog).parse_args(argv)
    try:
        code = a.fn(a)
    except (XcoreError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return int(code or 0)
