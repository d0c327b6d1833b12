"""Command line of the study mode: `python -m xcore.study build|publish|links|simulate|responses|report|drive`."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from xcore.errors import ConfigError, XcoreError

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


def _store(url: str | None):
    from xcore.study.store import StudyStore

    return StudyStore(url)


def cmd_build(a: argparse.Namespace) -> None:
    from xcore.methods import Run
    from xcore.study.build import ConditionSource, build_study, pick_items
    from xcore.study.definition import TEMPLATES

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
    from xcore.study.definition import Study

    study = Study.from_json(Path(a.definition).read_bytes())
    print(f"published {study.id} ({_store(a.db).publish(study)[:16]})")


def cmd_links(a: argparse.Namespace) -> None:
    for token in _store(a.db).add_participants(a.study, a.n):
        print(f"{a.base_url.rstrip('/')}/?study={a.study}&p={token}")


def cmd_simulate(a: argparse.Namespace) -> None:
    from xcore.study.simulate import simulate

    store = _store(a.db)
    if a.definition:
        from xcore.study.definition import Study

        store.publish(Study.from_json(Path(a.definition).read_bytes()))
    tokens = simulate(store, a.study, a.participants, parse_dist(a.dist), seed=a.seed,
                      attention_failure=a.attention_failure)
    print(f"simulated {len(tokens)} participants in {a.study}")


def cmd_responses(a: argparse.Namespace) -> None:
    _store(a.db).responses(a.study).to_csv(a.out, index=False)
    print(f"wrote {a.out}")


def cmd_report(a: argparse.Namespace) -> None:
    from xcore.study.analysis import analyse
    from xcore.study.report import html_report

    store = _store(a.db)
    analysis = analyse(store.study(a.study), store.responses(a.study), seed=a.seed)
    Path(a.out).write_text(html_report(analysis), encoding="utf-8")
    print(analysis.tests.to_string(index=False))
    print(f"wrote {a.out}")


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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m xcore.study", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    def db(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--db", default=None, help="SQLAlchemy URL or SQLite file (default: $XCORE_STUDY_DB "
                                                    "or xcore_study.sqlite beside the app)")

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

    s = sub.add_parser("publish", help="publish (freeze) a study definition file")
    db(s)
    s.add_argument("--definition", required=True)
    s.set_defaults(fn=cmd_publish)

    s = sub.add_parser("links", help="enrol participants and print their links")
    db(s)
    s.add_argument("--study", required=True)
    s.add_argument("-n", type=int, default=1)
    s.add_argument("--base-url", default="http://localhost:8501")
    s.set_defaults(fn=cmd_links)

    s = sub.add_parser("simulate", help="fill a study with synthetic participants from known rating distributions")
    db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--definition", help="publish this definition file first")
    s.add_argument("--participants", type=int, default=30)
    s.add_argument("--dist", action="append", required=True, help="CODE=p1,...,p5 (one per condition)")
    s.add_argument("--attention-failure", type=float, default=0.0)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_simulate)

    s = sub.add_parser("responses", help="export raw responses as CSV")
    db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)
    s.set_defaults(fn=cmd_responses)

    s = sub.add_parser("report", help="write the one-file HTML analysis report")
    db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--seed", type=int, default=0)
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("drive", help="answer as one participant, one screen at a time (crash-test driver)")
    db(s)
    s.add_argument("--study", required=True)
    s.add_argument("--token", required=True)
    s.add_argument("--delay", type=float, default=0.0)
    s.set_defaults(fn=cmd_drive)

    a = p.parse_args(argv)
    try:
        a.fn(a)
    except (XcoreError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
