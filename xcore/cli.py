"""The `xcore` command line: list methods, run one on data, explain, report, compare, start the app.

Exit codes: 0 success, 2 bad input or settings (the same message the app shows: file, line,
field, problem), 1 internal error. Progress goes to stderr (a bar on a terminal, plain lines
otherwise); results and tables go to stdout.
"""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

from xcore.errors import ConfigError, DataError, XcoreError
from xcore.methods.catalog import catalog, is_optional_field, is_tuple_field, method_info

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2
EXIT_DISAGREE = 1
"""`xcore verify`: some explanation item moved its prediction against its stated direction."""
OUTPUT_FILES = ("run.json", "predictions.csv", "explanations.json", "metrics.json", "report.html")
NONE_WORDS = {"", "none", "null", "~"}


# ---------------------------------------------------------------------- progress
class StderrProgress:
    """A progress callback for stderr: a tqdm bar (rate, ETA) on a terminal, plain lines otherwise,
    nothing if quiet."""

    STEPS = 1000
    """The bar counts thousandths of the run, so tqdm's rate and ETA follow the reported fraction."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, tty: bool | None = None,
                 width: int = 30) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.width = width
        self._last: tuple[int, str] | None = None
        self._bar: Any = None

    def __call__(self, fraction: float, message: str) -> None:
        if self.quiet:
            return
        f = min(max(float(fraction), 0.0), 1.0)
        if self.tty:
            self._draw(f, message)
            return
        pct = int(round(100 * f))
        # plain lines: a new line when the message changes or every 10 points
        if self._last is not None and self._last[1] == message and pct // 10 == self._last[0] // 10:
            return
        self.stream.write(f"{pct:3d}% {message}\n")
        self._last = (pct, message)
        self.stream.flush()

    def _draw(self, fraction: float, message: str) -> None:
        """Move the terminal bar to `fraction`, its description to `message`."""
        if self._bar is None:
            from tqdm import tqdm  # only a terminal run draws a bar; listing and --help stay light

            # the terminal's size, with a fallback where it reports none (a fresh pty says 0 x 0, and tqdm
            # then hides a bar whose row is outside the screen); width capped for readability
            size = shutil.get_terminal_size((self.width + 80, 24))
            self._bar = tqdm(total=self.STEPS, file=self.stream, ncols=min(size.columns, 160), nrows=size.lines,
                             leave=True, mininterval=0.1,
                             bar_format="{percentage:3.0f}%|{bar}| {desc} [{elapsed}<{remaining}]")
        self._bar.set_description_str(message[:60], refresh=False)
        self._bar.n = int(round(self.STEPS * fraction))
        self._bar.refresh()

    def note(self, message: str) -> None:
        """One status line (a stage such as loading or writing)."""
        if self.quiet:
            return
        self.done()
        self.stream.write(f"{message}\n")
        self.stream.flush()

    def done(self) -> None:
        """Close a drawn bar (its line stays)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


# ---------------------------------------------------------------------- settings
def parse_set(pairs: Sequence[str], settings_type: type) -> dict[str, Any]:
    """`key=value` strings as a mapping for `settings_type.parse`: values stay strings (pydantic coerces
    them), comma lists become tuples for tuple fields, and none/null become None for optional fields."""
    fields = settings_type.model_fields
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"--set needs key=value, got {pair!r}", field=key or "--set")
        field = fields.get(key)
        if field is not None and is_optional_field(field.annotation) and value.strip().lower() in NONE_WORDS:
            out[key] = None
        elif field is not None and is_tuple_field(field.annotation):
            out[key] = tuple(v.strip() for v in value.split(",") if v.strip())
        else:
            out[key] = value
    return out


def read_config(path: str) -> dict[str, Any]:
    """A YAML mapping of settings (yaml.safe_load); problems are `DataError`s naming file and line."""
    import yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise DataError(f"cannot read the settings file: {e.strerror or e}", file=str(p)) from None
    except UnicodeDecodeError as e:
        raise DataError(f"the settings file is not UTF-8 text: {e.reason}", file=str(p)) from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise DataError(f"invalid YAML: {problem}", file=str(p),
                        line=None if mark is None else mark.line + 1) from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DataError(f"the settings file must be a mapping of setting names to values, got {type(data).__name__}",
                        file=str(p))
    return {str(k): v for k, v in data.items()}


def build_settings(spec: Any, dataset: Any, config: dict[str, Any], sets: dict[str, Any],
                   config_name: str = "") -> Any:
    """The method's defaults for `dataset`, then the YAML file, then --set flags, validated by its Settings."""
    base = spec.default_settings(dataset).to_dict()
    try:
        return spec.settings_type.parse({**base, **config, **sets})
    except ConfigError as e:
        if config_name and e.field in config and e.field not in sets:
            raise ConfigError(f"{e.problem} (in {config_name})", field=e.field) from None
        raise


# ---------------------------------------------------------------------- data
def load_data(source: str, fmt: str = "auto", label: str | None = None) -> Any:
    """A dataset from a path (the app's loaders) or `sample:NAME` (a bundled sample)."""
    from xcore.data import load
    from xcore.data.samples import list_samples, load_sample

    if source.startswith("sample:"):
        name = source.split(":", 1)[1]
        names = [s.name for s in list_samples()]
        if name not in names:
            raise DataError(f"no bundled sample {name!r}; samples: {', '.join(names)}", file=source)
        return load_sample(name)
    if not Path(source).exists():
        raise DataError("no such file or folder", file=source)
    options = {"label": label} if label else {}
    return load(source, fmt=fmt, **options)


def check_label_given(dataset: Any, source: str, label: str | None) -> None:
    """A table file read without --label: exit 2 naming the columns that could be the label (no
    silent pick of the last column)."""
    if label is not None or getattr(dataset, "tabular", None) is None or source.startswith("sample:") \
            or not Path(source).is_file():
        return
    from xcore.plkb.tables import label_candidates  # the classifier's notion of a label column

    candidates = label_candidates(dataset.tabular) or [str(c) for c in dataset.tabular.columns]
    raise ConfigError(f"{source} is a table: say which column is the label with --label COLUMN "
                      f"(candidates: {', '.join(candidates[:20])})", field="--label")


# ---------------------------------------------------------------------- commands
def cmd_methods(args: argparse.Namespace, out: TextIO) -> int:
    """Every registered method: title, sample, explainers, and each setting with its type and default.

    Read from the light catalog (`xcore.methods.catalog`): no method package is imported."""
    for key, info in catalog().items():
        out.write(f"{key}: {info.title}\n  sample: sample:{info.sample}\n  explainers: {', '.join(info.explainers)}\n"
                  f"  settings ({info.settings_name}):\n")
        for s in info.settings:
            out.write(f"    {s.name:<16} {s.kind:<28} default {s.default}{'  ' + s.limits if s.limits else ''}\n")
        out.write("\n")
    return EXIT_OK


def write_outputs(run: Any, out_dir: Path, report: Callable[[], str]) -> list[Path]:
    """run.json, predictions.csv, explanations.json, metrics.json, then report.html into `out_dir`
    (the data files are written before the report is built, so a bad --targets loses nothing)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files: dict[str, Callable[[], str]] = {
        "run.json": lambda: run.to_json(indent=1),
        "predictions.csv": lambda: run.predictions.to_csv(index=False),
        "explanations.json": lambda: json.dumps({n: s.to_dict() for n, s in run.explanations.items()},
                                                allow_nan=False),
        "metrics.json": lambda: json.dumps(run.bundle()["metrics"], indent=1, allow_nan=False),
        "report.html": report,
    }
    paths = []
    for name, text in files.items():
        path = out_dir / name
        path.write_text(text(), encoding="utf-8")
        paths.append(path)
    return paths


def _at_least(value: int, low: int, flag: str) -> int:
    """`value`, or a `ConfigError` naming the flag when it is below `low`."""
    if value < low:
        raise ConfigError(f"must be at least {low}, got {value}", field=flag)
    return value


def surrogate_note(metrics: dict[str, Any]) -> str | None:
    """The fidelity sentence of a surrogate run (None for a run explaining its own model)."""
    from xcore.methods.surrogate import fidelity_sentence

    said = fidelity_sentence(metrics)
    return None if said is None else said[0]


def with_user_model(dataset: Any, args: argparse.Namespace, progress: StderrProgress) -> Any:
    """`dataset` with the user's model's predictions as its labels (--explain-predictions or --model), if given."""
    if getattr(args, "explain_predictions", None) and getattr(args, "model", None):
        raise ConfigError("give either --explain-predictions or --model, not both", field="--model")
    if getattr(args, "explain_predictions", None):
        from xcore.data.predictions import read_predictions, with_predictions

        progress.note(f"reading your model's predictions from {args.explain_predictions}")
        return with_predictions(dataset, read_predictions(args.explain_predictions, dataset))
    if getattr(args, "model", None):
        from xcore.data.predictions import with_predictions
        from xcore.explain.model_file import load_model_file

        progress.note(f"predicting the table's rows with your model {args.model}")
        return with_predictions(dataset, load_model_file(args.model, dataset).user_predictions(dataset))
    return dataset


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    info = method_info(args.method)  # an unknown method is refused before any method package is imported
    _at_least(args.cards, 0, "--cards")
    if args.explain_predictions and args.model:
        raise ConfigError("give either --explain-predictions or --model, not both", field="--model")
    if (args.explain_predictions or args.model) and not info.surrogate:
        from xcore.methods.catalog import catalog as _catalog

        names = ", ".join(f"{k} ({v.surrogate})" for k, v in _catalog().items() if v.surrogate)
        raise ConfigError(f"{args.method} cannot explain your model's predictions (it is not a surrogate "
                          f"method); methods that can: {names}", field="--explain-predictions")
    from xcore.methods import REGISTRY, run_method
    from xcore.report import report_html

    progress = StderrProgress(quiet=args.quiet)
    spec = REGISTRY[args.method]
    sets = parse_set(args.set or [], spec.settings_type)
    config = read_config(args.config) if args.config else {}
    progress.note(f"loading {args.data}")
    dataset = load_data(args.data, fmt=args.format, label=args.label)
    check_label_given(dataset, args.data, args.label)
    dataset = with_user_model(dataset, args, progress)
    if getattr(args, "positive", None) is not None:
        if "positive_class" not in spec.settings_type.model_fields:
            raise ConfigError(f"{args.method} has no positive class to choose", field="--positive")
        sets = {**sets, "positive_class": args.positive}
    reason = spec.applicable(dataset)
    if reason is not None:
        raise XcoreError(f"{spec.title} cannot run on {dataset.name!r}: {reason}")
    settings = build_settings(spec, dataset, config, sets, config_name=args.config or "")
    progress.note(f"running {args.method} on {dataset.name}")
    t0 = time.perf_counter()
    run = run_method(args.method, dataset, settings, progress=progress, cache=None)
    progress.done()
    progress.note(f"done in {time.perf_counter() - t0:.1f}s; writing the files and the report")
    out_dir = Path(args.out) if args.out else Path(f"xcore_{args.method}_run")
    summary = dataset.summary()
    paths = write_outputs(run, out_dir, lambda: report_html(run, targets=args.targets, n_cards=args.cards,
                                                            data_summary=summary))
    for p in paths:
        out.write(f"wrote {p}\n")
    note = surrogate_note(run.metrics)
    if note:
        out.write(note + "\n")
    for k, v in run.metrics.items():
        out.write(f"{k:>12} {v:.6g}\n")
    for note in run.extras.get("notes", ()) if isinstance(run.extras, dict) else ():
        out.write(f"note: {note}\n")
    return EXIT_OK


def read_run(path: str) -> Any:
    """A `Run` read back from a run bundle file; problems are `DataError`s naming the file."""
    from xcore.methods import Run

    p = Path(path)
    try:
        text = p.read_bytes()
    except OSError as e:
        raise DataError(f"cannot read the run bundle: {e.strerror or e}", file=str(p)) from None
    try:
        return Run.from_bundle(text)
    except XcoreError as e:
        raise DataError(str(e), file=str(p)) from None


def _pick_explanation(run: Any, target: str, explainer: str | None) -> tuple[str, Any]:
    """(explainer name, explanation) of `target`: the named explainer's, else the first that explains it."""
    names = [explainer] if explainer else list(run.explanations)
    if explainer and explainer not in run.explanations:
        raise ConfigError(f"no explainer {explainer!r} in this run; it has {', '.join(run.explanations) or 'none'}",
                          field="--explainer")
    for name in names:
        if target in run.explanations[name]:
            return name, run.explanations[name][target]
    every = list(dict.fromkeys(t for n in names for t in run.explanations[n].targets))
    close = difflib.get_close_matches(target, every, n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    raise XcoreError(f"no explanation of {target!r} in this {run.method} run{hint}")


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    import pandas as pd

    from xcore.explain.render import item_table
    from xcore.explain.text import explanation_text

    _at_least(args.k, 1, "-k")
    run = read_run(_bundle_path(args.run))
    name, exp = _pick_explanation(run, args.target, args.explainer)
    out.write(f"{exp.target} — {name}\n")
    if exp.score_spec is not None:
        out.write(f"{exp.score_spec.caption()}\n")
    out.write("\n")
    if exp.items:
        table = item_table(exp, args.k)[["rank", "score", "direction", "effect", "text", "natural"]]
        with pd.option_context("display.max_colwidth", 80, "display.width", 200):
            out.write(table.to_string(index=False) + "\n\n")
    out.write(explanation_text(exp, k=min(3, args.k)) + "\n")
    return EXIT_OK


def _bundle_path(path: str) -> str:
    """A run bundle file given as itself or as the folder `xcore run` wrote (its run.json)."""
    p = Path(path)
    return str(p / "run.json") if p.is_dir() else path


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    """Check every explanation of a run against its model by intervention; exit 1 when any item moved
    the prediction against its stated direction."""
    from xcore.data.samples import list_samples, load_sample
    from xcore.methods.verify import rebuild_run, verify_run

    _at_least(args.k, 1, "-k")
    bundle = read_run(_bundle_path(args.run))
    progress = StderrProgress(quiet=args.quiet)
    if args.data:
        data = load_data(args.data, fmt=args.format, label=args.label)
    elif bundle.dataset in {s.name for s in list_samples()}:
        data = load_sample(bundle.dataset)
    else:
        raise ConfigError(f"the bundle's data {bundle.dataset!r} is not a bundled sample: give it with --data",
                          field="--data")
    data = with_user_model(data, args, progress)  # a surrogate run: the same predictions as its labels
    run, notes = rebuild_run(bundle, data, progress=progress)
    for note in notes:
        progress.note(note)
    t0 = time.perf_counter()
    result = verify_run(run, data, targets=args.targets, k=args.k, explanations=bundle.explanations,
                        explainers=[args.explainer] if args.explainer else None, progress=progress)
    progress.done()
    out.write(result.table() + "\n")
    bad = result.items[result.items["verdict"] == "opposite"]
    for r in bad.head(10).itertuples(index=False):
        out.write(f"against its direction: {r.explainer} {r.target} #{r.rank} {r.text[:70]} "
                  f"(says {r.direction:+d}, measured {r.measured_change:+.3g})\n")
    out.write(f"verified in {time.perf_counter() - t0:.1f}s: "
              f"{'every directed item agrees' if result.ok else f'{len(bad)} item(s) disagree'}\n")
    return EXIT_OK if result.ok else EXIT_DISAGREE


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    from xcore.report import report_html

    _at_least(args.cards, 0, "--cards")
    run = read_run(args.run)
    summary = load_data(args.data).summary() if args.data else None
    html = report_html(run, targets=args.targets, n_cards=args.cards, data_summary=summary)
    path = Path(args.out) if args.out else Path(args.run).with_name("report.html")
    path.write_text(html, encoding="utf-8")
    out.write(f"wrote {path}\n")
    return EXIT_OK


def cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    import pandas as pd

    from xcore.compare import compare_runs, disagreements, pair_summary, top_items_table

    _at_least(args.k, 1, "-k")
    _at_least(args.show, 0, "--show")
    runs = [read_run(p) for p in args.runs]
    names = [Path(p).stem if Path(p).stem != "run" else Path(p).parent.name or Path(p).stem for p in args.runs]
    if len(set(names)) < len(names):
        names = [f"run{i + 1}" for i in range(len(runs))]
    columns, agreement = compare_runs(runs, k=args.k, names=names)
    pairs = pair_summary(agreement)
    worst = disagreements(agreement)
    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        out.write(f"Agreement between explainers (top-{args.k} overlap, Spearman over shared items)\n")
        out.write(pairs.round(3).to_string(index=False) + "\n\n")
        out.write("Targets where they disagree most\n")
        out.write(worst.head(args.show).round(3).to_string(index=False) + "\n")
        for target in worst["target"].head(min(args.show, 3)):
            out.write(f"\n{target}\n{top_items_table(columns, target, k=args.k).to_string(index=False)}\n")
    if args.out:
        from xcore.report import compare_html

        Path(args.out).write_text(compare_html(columns, agreement, k=args.k), encoding="utf-8")
        out.write(f"\nwrote {args.out}\n")
    if args.csv:
        agreement.to_csv(args.csv, index=False)
        out.write(f"wrote {args.csv}\n")
    return EXIT_OK


def app_path() -> Path | None:
    """app.py in the repository this package was installed from (None when installed without it)."""
    candidate = Path(__file__).resolve().parent.parent / "app.py"
    return candidate if candidate.is_file() else None


def cmd_app(args: argparse.Namespace, out: TextIO) -> int:
    from xcore.study.access import KEY_ENV, check_key_strength

    if os.environ.get(KEY_ENV):
        check_key_strength(os.environ[KEY_ENV])  # a short researcher key stops the start, with the reason
    app = app_path()
    if app is None:
        raise XcoreError("app.py was not found next to the xcore package: the dashboard needs a source "
                         "checkout (git clone, then pip install -e .)")
    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port)]
    if args.headless:
        command += ["--server.headless", "true"]
    return subprocess.call(command, cwd=app.parent)


# ---------------------------------------------------------------------- parser
def parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = argparse.ArgumentParser(prog="xcore", description="xcore, the relational explanation inspector.")
    p.add_argument("--debug", action="store_true", help="show the traceback of internal errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("methods", help="list the registered methods, their settings and defaults")
    s.set_defaults(func=cmd_methods)

    s = sub.add_parser("run", help="run a method on data; write run.json, predictions.csv, "
                                   "explanations.json, metrics.json and report.html")
    s.add_argument("method", help=f"a registered method: {', '.join(catalog())} (see `xcore methods`)")
    s.add_argument("data", help="a data file or folder (any format the app loads), or sample:NAME")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a setting (repeatable; lists comma-separated)")
    s.add_argument("--config", metavar="RUN.yaml", help="settings from a YAML mapping (--set wins)")
    s.add_argument("--out", metavar="DIR", help="output folder (default xcore_METHOD_run)")
    s.add_argument("--format", default="auto", help="data format (default: detect)")
    s.add_argument("--label", help="label column of a tabular CSV (required for a table file)")
    s.add_argument("--positive", metavar="CLASS", help="with several classes: the class to explain against the "
                                                       "rest (setting positive_class)")
    s.add_argument("--targets", nargs="+", metavar="TARGET", help="targets given explanation cards in the report")
    s.add_argument("--cards", type=int, default=5, help="explanation cards when --targets is not given (default 5)")
    s.add_argument("--explain-predictions", metavar="PREDS.csv",
                   help="explain your own model: a CSV of target,prediction[,score] (target: a ground atom, or a "
                        "table's row id); the method fits to these predictions instead of the truth and reports "
                        "its fidelity to them on held-out targets")
    s.add_argument("--model", metavar="MODEL.onnx",
                   help="explain your own model of a table, given as an ONNX file (other model files are refused; "
                        "nothing is unpickled): its predictions of every row are what the method fits to")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    s.set_defaults(func=cmd_run)

    s = sub.add_parser("explain", help="print one explanation from a run bundle as a ranked table and text")
    s.add_argument("run", metavar="RUN.json")
    s.add_argument("target", help="the target, e.g. \"rating(u00, i102)\" or \"row 17\"")
    s.add_argument("--explainer", help="explainer registry name (default: the first that explains the target)")
    s.add_argument("-k", type=int, default=10, help="items shown (default 10)")
    s.set_defaults(func=cmd_explain)

    s = sub.add_parser("verify", help="check a run's explanations against its model by intervention "
                                      "(exit 0: every directed item agrees, 1: some disagree, 2: bad input)")
    s.add_argument("run", metavar="RUN_DIR|RUN.json", help="the folder `xcore run` wrote, or its run.json")
    s.add_argument("--data", help="the run's data (default: the bundled sample the run names)")
    s.add_argument("--format", default="auto", help="data format (default: detect)")
    s.add_argument("--label", help="label column of a tabular CSV")
    s.add_argument("--targets", nargs="+", metavar="TARGET", help="only these predictions (default: all)")
    s.add_argument("--explainer", help="only this explainer (registry name)")
    s.add_argument("-k", type=int, default=5, help="top items checked per prediction (default 5)")
    s.add_argument("--explain-predictions", metavar="PREDS.csv", help="a surrogate run: the predictions file it "
                                                                       "was run with")
    s.add_argument("--model", metavar="MODEL.onnx", help="a surrogate run: the ONNX model it was run with")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    s.set_defaults(func=cmd_verify)

    s = sub.add_parser("report", help="rebuild the HTML report of a run bundle")
    s.add_argument("run", metavar="RUN.json")
    s.add_argument("--out", metavar="FILE", help="report file (default report.html beside the bundle)")
    s.add_argument("--data", help="the run's data (adds its summary to the report)")
    s.add_argument("--targets", nargs="+", metavar="TARGET")
    s.add_argument("--cards", type=int, default=5)
    s.set_defaults(func=cmd_report)

    s = sub.add_parser("compare", help="agreement between the explainers of runs on the same data")
    s.add_argument("runs", nargs="+", metavar="RUN.json")
    s.add_argument("-k", type=int, default=5, help="top-k for the overlap (default 5)")
    s.add_argument("--show", type=int, default=10, help="disagreeing targets listed (default 10)")
    s.add_argument("--out", metavar="FILE.html", help="also write the comparison as HTML")
    s.add_argument("--csv", metavar="FILE.csv", help="also write the per-target agreement as CSV")
    s.set_defaults(func=cmd_compare)

    sub.add_parser("study", help="user studies: build, publish, links, serve (participant-only server), "
                                 "simulate, responses, report (xcore study --help)")

    s = sub.add_parser("app", help="start the dashboard (streamlit run app.py)")
    s.add_argument("--port", type=int, default=8501)
    s.add_argument("--headless", action="store_true", help="do not open a browser")
    s.set_defaults(func=cmd_app)
    return p


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad input or settings, 1 internal error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["study"]:  # the study mode's own command line (xcore.study.cli)
        from xcore.study.cli import main as study_main

        return study_main(argv[1:], prog="xcore study")
    args = parser().parse_args(argv)
    out = out if out is not None else sys.stdout
    err = sys.stderr
    try:
        return args.func(args, out)
    except XcoreError as e:
        cause = e.__cause__
        if cause is not None and cause is not e and not isinstance(cause, XcoreError):
            return _internal(e, args.debug, err)
        err.write(f"xcore: error: {e}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.write("xcore: interrupted\n")
        return 130
    except Exception as e:  # noqa: BLE001 - the process boundary: one sentence, the traceback on --debug
        return _internal(e, args.debug, err)


def _internal(error: BaseException, debug: bool, err: TextIO) -> int:
    """Report an internal error in one sentence (the traceback with --debug); exit code 1."""
    if debug:
        import traceback

        traceback.print_exception(error, file=err)
    err.write(f"xcore: internal error: {error} (run with --debug for the traceback)\n")
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
