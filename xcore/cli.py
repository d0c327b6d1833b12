"""The `xcore` command line: list methods, run one on data, evaluate it on held-out data, explain,
verify, report, compare, start the app.

Exit codes: 0 success, 2 bad input or settings (the same message the app shows: file, line,
field, problem), 1 internal error. Progress goes to stderr (a bar on a terminal, plain lines
otherwise); results and tables go to stdout. This module is the parser and the dispatch; each
command's work lives in `xcore.commands`.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import traceback
from pathlib import Path
from typing import Any, Sequence, TextIO

from xcore.commands import EXIT_BAD_INPUT, EXIT_DISAGREE, EXIT_INTERNAL, EXIT_OK  # noqa: F401  (re-exported)
from xcore.commands.arguments import at_least, build_settings, parse_set, read_config  # noqa: F401  (re-exported)
from xcore.commands.progress import StderrProgress  # noqa: F401  (re-exported)
from xcore.errors import ConfigError, XcoreError
from xcore.methods.catalog import catalog, method_info


# ---------------------------------------------------------------------- commands
# Each command checks its light arguments here, then imports its module (pandas, pydantic, the method
# packages) only when it runs, so listing, --help and argument errors stay light (tests/cli/test_cli_startup.py).
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


def check_user_model_flags(args: argparse.Namespace, info: Any) -> None:
    """--explain-predictions and --model: one of them at most, and only for a surrogate method."""
    if args.explain_predictions and args.model:
        raise ConfigError("give either --explain-predictions or --model, not both", field="--model")
    if (args.explain_predictions or args.model) and not info.surrogate:
        names = ", ".join(f"{k} ({v.surrogate})" for k, v in catalog().items() if v.surrogate)
        raise ConfigError(f"{args.method} cannot explain your model's predictions (it is not a surrogate "
                          f"method); methods that can: {names}", field="--explain-predictions")


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore run`: an unknown method or a bad flag is refused before any method package is imported."""
    info = method_info(args.method)
    at_least(args.cards, 0, "--cards")
    check_user_model_flags(args, info)
    from xcore.commands.run import run_command  # heavy: imported when the command runs (see above)

    return run_command(args, out)


def cmd_evaluate(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore evaluate`: the method, --folds, --test-size and --seed checked before anything heavy."""
    method_info(args.method)
    if args.folds is not None:
        at_least(args.folds, 2, "--folds")
    if args.test_size is not None and not 0.0 < args.test_size < 1.0:
        raise ConfigError(f"must be a fraction between 0 and 1 (exclusive), got {args.test_size:g}", field="--test-size")
    at_least(args.seed, 0, "--seed")
    from xcore.commands.evaluate import evaluate_command  # heavy: imported when the command runs (see above)

    return evaluate_command(args, out)


def cmd_explain(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore explain`: one explanation of a run bundle."""
    at_least(args.k, 1, "-k")
    from xcore.commands.explain import explain_command  # heavy: imported when the command runs (see above)

    return explain_command(args, out)


def cmd_verify(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore verify`: exit 1 when any item moved the prediction against its stated direction."""
    at_least(args.k, 1, "-k")
    from xcore.commands.verify import verify_command  # heavy: imported when the command runs (see above)

    return verify_command(args, out)


def cmd_report(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore report`: the HTML report of a run bundle."""
    at_least(args.cards, 0, "--cards")
    from xcore.commands.report import report_command  # heavy: imported when the command runs (see above)

    return report_command(args, out)


def cmd_compare(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore compare`: agreement between the explainers of runs."""
    at_least(args.k, 1, "-k")
    at_least(args.show, 0, "--show")
    from xcore.commands.report import compare_command  # heavy: imported when the command runs (see above)

    return compare_command(args, out)


def app_path() -> Path | None:
    """app.py in the repository this package was installed from (None when installed without it)."""
    candidate = Path(__file__).resolve().parent.parent / "app.py"
    return candidate if candidate.is_file() else None


def cmd_app(args: argparse.Namespace, out: TextIO) -> int:
    """`xcore app`: streamlit run app.py (a weak researcher key stops the start, with the reason)."""
    # xcore.study's package imports pandas and SQLAlchemy: only when the app is started
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
def _add_run(sub: Any) -> None:
    """`xcore run`: its method, data, settings, outputs and your-model flags."""
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


def _add_evaluate(sub: Any) -> None:
    """`xcore evaluate`: its method, data, settings and split."""
    s = sub.add_parser("evaluate", help="held-out evaluation of a method: fit on a training part of the labelled "
                                        "units, predict the held-out part, score it beside the trivial predictor")
    s.add_argument("method", help=f"a registered method: {', '.join(catalog())} (see `xcore methods`)")
    s.add_argument("data", help="a data file or folder (any format the app loads), or sample:NAME")
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a setting (repeatable; lists comma-separated)")
    s.add_argument("--config", metavar="RUN.yaml", help="settings from a YAML mapping (--set wins)")
    how = s.add_mutually_exclusive_group()
    how.add_argument("--folds", type=int, metavar="K", help="K-fold cross-validation of the labelled units (K >= 2)")
    how.add_argument("--test-size", type=float, metavar="F",
                     help="one hold-out split keeping the fraction F of the labelled units for the test (default 0.25)")
    how.add_argument("--folds-from", metavar="PREDICATE",
                     help="the data's own folds: a binary PREDICATE(entity, fold) puts each labelled unit whose first "
                          "argument is entity in that fold (e.g. cv_fold of Aleph/DRM data)")
    s.add_argument("--seed", type=int, default=0, help="seed of the split (default 0)")
    s.add_argument("--out", metavar="DIR", help="also write predictions.csv (held-out, with their fold), folds.csv "
                                                "and metrics.json into DIR")
    s.add_argument("--format", default="auto", help="data format (default: detect)")
    s.add_argument("--label", help="label column of a tabular CSV (required for a table file)")
    s.add_argument("--positive", metavar="CLASS", help="with several classes: the class to predict against the "
                                                       "rest (setting positive_class)")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress on stderr")
    s.set_defaults(func=cmd_evaluate)


def _add_inspection(sub: Any) -> None:
    """`xcore explain` and `xcore verify`: read a run bundle back."""
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


def _add_reports(sub: Any) -> None:
    """`xcore report` and `xcore compare`: HTML and agreement from run bundles."""
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


def _add_study_and_app(sub: Any) -> None:
    """`xcore study` (its own command line) and `xcore app`."""
    sub.add_parser("study", help="user studies: build, publish, links, serve (participant-only server), "
                                 "simulate, responses, report (xcore study --help)")

    s = sub.add_parser("app", help="start the dashboard (streamlit run app.py)")
    s.add_argument("--port", type=int, default=8501)
    s.add_argument("--headless", action="store_true", help="do not open a browser")
    s.set_defaults(func=cmd_app)


def parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    p = argparse.ArgumentParser(prog="xcore", description="xcore, the relational explanation inspector.")
    p.add_argument("--debug", action="store_true", help="show the traceback of internal errors")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    s = sub.add_parser("methods", help="list the registered methods, their settings and defaults")
    s.set_defaults(func=cmd_methods)
    for add in (_add_run, _add_evaluate, _add_inspection, _add_reports, _add_study_and_app):
        add(sub)
    return p


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line; returns the exit code (0 ok, 2 bad input or settings, 1 internal error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["study"]:  # the study mode's own command line (xcore.study.cli)
        # xcore.study's package imports pandas and SQLAlchemy: only for `xcore study`
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
        traceback.print_exception(error, file=err)
    err.write(f"xcore: internal error: {error} (run with --debug for the traceback)\n")
    return EXIT_INTERNAL


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
