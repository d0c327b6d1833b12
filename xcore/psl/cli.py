"""``python -m xcore.psl``: run a PSL project as PSL's command line does (MAP inference).

    python -m xcore.psl --config X.json --output DIR
    python -m xcore.psl --model X.psl --data X.data --output DIR

Reads the project (`xcore.data.io.psl_project`), grounds its rules on the inference split,
finds the MAP state and writes one file per open predicate with targets into DIR, named and
shaped as PSL writes them: ``<PREDICATE IN UPPER CASE>.txt``, one line per target atom, its
arguments then its value, tab-separated. Without ``--output`` the values are printed as PSL
prints them (``KNOWS('Anna', 'Bob') = 0.8``). ``--eval`` prints metrics against the truth.

Which steps run is decided as PSL does (`xcore.psl.learn_command.runtime_steps`, printed as
``steps: ...`` on stderr): a config with learn data learns first with its ``runtime.learn.method``
(default StructuredPerceptron), a ``.data`` file only with ``--learn`` (default MaxLikelihoodMPE);
``--no-learn`` turns learning off.

Weight learning (``--learn [METHOD]``, `xcore.psl.weight_learning`) runs as PSL users run it: learn
the soft rules' weights on the learn split (its observations and the truth of its targets), write
the learned rules in PSL's syntax to ``DIR/<project>-learned.psl`` (or the
``runtime.learn.output.model.path`` option), then infer on the infer split with the learned
weights: always for a project with learn and infer data (PSL's runtime learns, then infers), and
with ``--infer`` for a single ``.data`` file (PSL 2's ``-l`` only learns; infer on the eval data
with ``--model DIR/X-learned.psl --data X-eval.data``). Options come from the config's
``options`` and ``learn.options`` and from ``-D key=value`` (``votedperceptron.numsteps=50``);
``-D admmreasoner.epsilonabs=1e-5`` (``.epsilonrel``, ``.maxiterations``, ``.stepsize``) steer
``--method admm`` as Java's ADMMReasoner options do; an option xcore does not use is named in a warning.

Exit codes: 0 success, 2 bad input (the message names file, line and field; no traceback),
1 internal error. Only what inference needs is imported (no torch, scikit-learn, plotly or
streamlit), and only after the arguments are read.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Sequence, TextIO

from xcore.errors import XcoreError
from xcore.lazy import defer_module

EXIT_OK, EXIT_INTERNAL, EXIT_BAD_INPUT = 0, 1, 2
METHODS = ("auto", "lbfgs", "admm", "qp")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m xcore.psl",
        description="Run a PSL project (MAP inference, after weight learning with --learn) and write "
                    "the inferred values as PSL does.")
    src = p.add_argument_group("project (one of)")
    src.add_argument("--config", "-c", metavar="X.json", help="PSL runtime config (JSON or YAML)")
    src.add_argument("--data", "-d", metavar="X.data", help="PSL .data file (with --model)")
    src.add_argument("--model", "-m", metavar="X.psl", help="PSL rule file (with --data)")
    p.add_argument("--output", "-o", metavar="DIR", help="folder for one <PREDICATE>.txt per open predicate "
                   "(default: print the values)")
    p.add_argument("--eval", "-e", nargs="*", metavar="EVALUATOR", default=None,
                   help="print MSE/MAE (and AUROC/AUPR for 0/1 truth) of each open predicate against its truth")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="MAP solver: auto (L-BFGS-B when all hinges are squared and there are no hard "
                        "constraints, else the HiGHS QP), lbfgs, admm, qp")
    p.add_argument("--split", choices=("infer", "learn"), default="infer",
                   help="which data split to run on (projects with learn/infer data)")
    p.add_argument("--infer", "-i", action="store_true",
                   help="run inference (the default; after --learn on a single .data file, infer on it too)")
    p.add_argument("--learn", "-l", nargs="?", const=True, default=None, metavar="METHOD",
                   help="learn the rule weights on the learn split first (a config with learn data does "
                        "this without the flag, as PSL's runtime does). METHOD: MaxLikelihoodMPE, "
                        "StructuredPerceptron, GridSearch, RandomGridSearch, GuidedRandomGridSearch (PSL's "
                        "Java class names work too); default: the config's runtime.learn.method, else "
                        "StructuredPerceptron for a config and MaxLikelihoodMPE for .data + .psl, as PSL")
    p.add_argument("--no-learn", action="store_true",
                   help="never learn weights: infer with the weights written in the rules")
    p.add_argument("--check-unique", dest="check_unique", action="store_true", default=None,
                   help="check whether the MAP optimum is unique (two LPs over the optimal face; done by default "
                        f"up to {UNIQUENESS_AUTO_LIMIT:,} potentials): a flat optimum is reported as a warning")
    p.add_argument("--no-check-unique", dest="check_unique", action="store_false",
                   help="skip the uniqueness check")
    p.add_argument("-D", dest="options", action="append", default=[], metavar="KEY=VALUE",
                   help="PSL option: votedperceptron.* and gradientdescent.* steer --learn, "
                        "runtime.learn.output.model.path names the learned model, admmreasoner.epsilonabs, "
                        ".epsilonrel, .maxiterations and .stepsize steer --method admm (an epsilon selects "
                        "PSL's stopping rule); others are ignored with a warning naming them")
    p.add_argument("--int-ids", action="store_true", help="accepted for PSL; constants are text either way")
    p.add_argument("--quiet", "-q", action="store_true", help="no timing lines on stderr")
    return p


def main(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run the command; return the exit code (0 ok, 2 bad input, 1 internal error)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse prints its own message (exit 2) or the help (exit 0)
        return int(e.code or 0)
    options = parse_options(args.options)
    if options is None:
        err.write("error: -D takes KEY=VALUE (e.g. -D votedperceptron.numsteps=50)\n")
        return EXIT_BAD_INPUT
    args.options = options
    if isinstance(args.learn, str):
        # start-up: weight learning needs numpy and scipy.sparse, which --help and bad arguments do not
        from xcore.psl.weight_learning import resolve_method

        try:
            args.learn = resolve_method(args.learn)
        except XcoreError as e:
            err.write(f"error: {e}\n")
            return EXIT_BAD_INPUT
    if args.learn is not None and args.no_learn:
        err.write("error: give --learn or --no-learn, not both\n")
        return EXIT_BAD_INPUT
    if args.config and (args.data or args.model):
        err.write("error: give either --config, or --data with --model\n")
        return EXIT_BAD_INPUT
    if not args.config and not args.data:
        err.write("error: give --config X.json, or --data X.data with --model X.psl\n")
        return EXIT_BAD_INPUT
    try:
        return run(args, out, err)
    except BrokenPipeError:  # `... | head`: the reader has gone, as for any command-line tool
        _quiet_broken_pipe()
        return EXIT_OK
    except XcoreError as e:
        err.write(f"error: {e}\n")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        err.write("interrupted\n")
        return EXIT_INTERNAL
    except Exception as e:  # noqa: BLE001 - the boundary: a short message, traceback only on request
        if os.environ.get("XCORE_DEBUG"):
            raise
        err.write(f"internal error: {type(e).__name__}: {e} (set XCORE_DEBUG=1 for the traceback)\n")
        return EXIT_INTERNAL


def _quiet_broken_pipe() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush into the closed pipe stays silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # pragma: no cover - stdout already closed or not a file
        pass


class Laps:
    """Wall and CPU seconds (all threads of the process) of each phase of the command."""

    def __init__(self) -> None:
        self.times: list[tuple[str, float, float]] = []
        self.t0, self.c0 = time.perf_counter(), time.process_time()

    def lap(self, label: str) -> None:
        """Close the phase `label`: its seconds since the previous lap."""
        t1, c1 = time.perf_counter(), time.process_time()
        self.times.append((label, t1 - self.t0, c1 - self.c0))
        self.t0, self.c0 = t1, c1

    def describe(self) -> str:
        """The phases' wall seconds on one line and their CPU seconds on the next."""
        phases = "in-process phases: " + ", ".join(f"{label} {sec:.3f} s" for label, sec, _ in self.times)
        cpu = "in-process CPU: " + ", ".join(f"{label} {sec:.3f} s" for label, _, sec in self.times)
        return f"{phases}\n{cpu}"


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Load, ground, infer, write (`xcore.psl.project_run`); timing lines go to `err` unless quiet."""
    laps = Laps()
    defer_module("numpy.f2py")  # imported by scipy.sparse's `from numpy import *`, never used here
    # start-up: pandas, pyarrow, DuckDB and scipy.sparse load only once the arguments are read
    from xcore.psl.project_run import run_project

    laps.lap("imports")  # pandas, pyarrow, DuckDB, scipy.sparse: the floor of a fresh process
    return run_project(args, out, err, laps.lap, laps.describe, UNIQUENESS_AUTO_LIMIT)


UNIQUENESS_AUTO_LIMIT = 200_000
"""Programs up to this many potentials are checked for a unique optimum unless --no-check-unique."""


def parse_options(pairs: Sequence[str]) -> dict[str, str] | None:
    """``-D key=value`` pairs as a dict (None when one has no ``=``)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            return None
        out[key.strip()] = value.strip()
    return out
