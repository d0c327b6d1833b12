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
``options`` and ``learn.options`` and from ``-D key=value`` (``votedperceptron.numsteps=50``).

Exit codes: 0 success, 2 bad input (the message names file, line and field; no traceback),
1 internal error. Only what inference needs is imported (no torch, scikit-learn, plotly or
streamlit), and only after the arguments are read.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Sequence, TextIO

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
                        "runtime.learn.output.model.path names the learned model; others are accepted "
                        "and ignored (xcore's solvers are exact)")
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
        from xcore.errors import XcoreError
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
    from xcore.errors import XcoreError

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


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Load, ground, infer, write; timing lines go to `err` unless quiet."""
    t0, c0 = time.perf_counter(), time.process_time()
    times: list[tuple[str, float, float]] = []

    def lap(label: str) -> None:
        """Wall and CPU seconds (all threads of the process) since the previous lap."""
        nonlocal t0, c0
        t1, c1 = time.perf_counter(), time.process_time()
        times.append((label, t1 - t0, c1 - c0))
        t0, c0 = t1, c1

    from xcore.lazy import defer_module

    defer_module("numpy.f2py")  # imported by scipy.sparse's `from numpy import *`, never used here
    from xcore.data.io.psl_project import UNLIMITED, read_project
    from xcore.errors import XcoreError
    from xcore.psl.model import PSLModel

    lap("imports")  # pandas, pyarrow, DuckDB, scipy.sparse: the floor of a fresh process
    project = read_project(config=args.config, data=args.data, model=args.model,
                           limits=UNLIMITED)
    ignored = [k for k in args.options if not k.lower().startswith(LEARNING_OPTION_PREFIXES)]
    if ignored and not args.quiet:
        err.write(f"note: PSL options ignored: {', '.join(f'{k}={args.options[k]}' for k in ignored)}\n")
    split = args.split
    from xcore.psl.learn_command import runtime_steps

    steps = runtime_steps(project, args)
    for skipped, kept in project.duplicate_rules(split):  # Java's Model.addRule skips them too
        err.write(f"warning: {skipped.file}:{skipped.line}: rule `{skipped.text.strip()}` is the same rule as "
                  f"`{kept.text.strip()}` (line {kept.line}) for Java PSL (same clause, weight aside): skipped, "
                  "as Java's runtime does\n")
    err.write(steps.describe() + "\n")  # which steps ran, even when quiet (PSL's runtime decides them)
    learned = None
    if steps.learn is not None:
        from xcore.psl.learn_command import learn_from_project

        asked = args.learn is not None  # --learn on the command line, not the runtime's own choice
        args.learn = steps.learn
        try:
            learned = learn_from_project(project, args, err)
        except XcoreError as e:
            if asked or not str(e).startswith("weight learning needs truth"):
                raise
            err.write(f"note: learning skipped: {e}; inferring with the rules' written weights\n")
        lap("learn")
        if not steps.infer:
            return EXIT_OK
    if learned is not None:
        rules, split = learned.infer_rules, "infer"
    elif not steps.infer:  # runtime.inference=false and nothing to learn: PSL's runtime does nothing
        return EXIT_OK
    else:
        rules = project.parsed_rules(split)
    ds = project.dataset(split, UNLIMITED)
    lap("load")
    model = PSLModel(rules, inference=args.method, limit=None)
    model.ground(ds)
    lap("ground")
    result = model.infer(warm_start=False)  # HiGHS's banner is kept off stdout by xcore.runtime.new_highs
    lap("infer")
    if not result.converged:  # the values are written, but the user must know they are approximate
        err.write(f"warning: {result.method} inference did not converge: {result.message}\n")
    report_uniqueness(model, result, args, err)
    lap("check")
    frames = target_values(model)
    if args.output:
        write_values(frames, args.output)
    else:
        print_values(frames, out)
    lap("write")
    if args.eval is not None:
        print_metrics(frames, out)
    if not args.quiet:
        phases = "in-process phases: " + ", ".join(f"{label} {sec:.3f} s" for label, sec, _ in times)
        cpu = "in-process CPU: " + ", ".join(f"{label} {sec:.3f} s" for label, _, sec in times)
        err.write(f"{model.store_.n_targets:,} target atoms, {model.program_.n_potentials:,} potentials, "
                  f"energy {result.energy:.6g} ({result.method}); {phases}\n{cpu}\n")
    return EXIT_OK


UNIQUENESS_AUTO_LIMIT = 200_000
"""Programs up to this many potentials are checked for a unique optimum unless --no-check-unique."""


def report_uniqueness(model, result, args, err: TextIO) -> None:
    """Say whether the MAP optimum is unique (`xcore.psl.uniqueness`): a warning when it is not."""
    prog = model.program_
    check = args.check_unique
    if check is None:
        check = prog.n_potentials + prog.C.shape[0] <= UNIQUENESS_AUTO_LIMIT
        if not check:
            if not args.quiet:
                err.write(f"optimum uniqueness not checked ({prog.n_potentials:,} potentials; --check-unique checks "
                          "it with two LPs)\n")
            return
    if not check:
        return
    from xcore.psl.uniqueness import optimum_spread

    spread = optimum_spread(prog, result.y)
    if not spread.unique:
        store = model.store_
        names = dict(zip(spread.moving[:3], store.atom_text(store.target_ids[spread.moving[:3]])))
        err.write("warning: " + spread.describe(names) + "\n")
    elif not args.quiet:
        err.write(spread.describe() + "\n")


LEARNING_OPTION_PREFIXES = ("votedperceptron.", "gradientdescent.", "runtime.learn", "inference.normalize")


def parse_options(pairs: Sequence[str]) -> dict[str, str] | None:
    """``-D key=value`` pairs as a dict (None when one has no ``=``)."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key.strip():
            return None
        out[key.strip()] = value.strip()
    return out


def target_values(model) -> dict[str, "object"]:
    """Per open predicate with targets: a frame of its target atoms' arguments and MAP values."""
    import numpy as np

    store, y = model.store_, model.y_
    out = {}
    for name, atoms in store.predicates.items():
        if not atoms.n_targets:
            continue
        import pandas as pd

        cols = {f"a{i}": store.constants[atoms.args[atoms.n_obs:, i]] for i in range(atoms.predicate.arity)}
        ids = atoms.ids[atoms.n_obs:]
        frame = pd.DataFrame(cols)
        frame["value"] = np.asarray(y)[store.target_index[ids]]
        frame["truth"] = store.truth[store.target_index[ids]]
        out[name] = frame
    return out


def write_values(frames: dict, folder: str) -> None:
    """One ``<NAME>.txt`` per predicate: tab-separated arguments then the value (PSL's output).

    Lines are joined by Arrow kernels (no Python per row); constants are written as they are (PSL
    does not quote them) and values in their shortest exact decimal form.
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    from xcore.data.io.psl_project import output_file_name
    from xcore.errors import DataError

    path = Path(folder)
    try:
        path.mkdir(parents=True, exist_ok=True)
        for name, frame in frames.items():
            columns = [pa.array(frame[c].astype(str), pa.large_string()) for c in frame.columns
                       if c not in ("value", "truth")]
            columns.append(pc.cast(pa.array(frame["value"].to_numpy(dtype=float)), pa.large_string()))
            lines = pc.binary_join_element_wise(*columns, pa.scalar("\t", pa.large_string())) \
                if len(columns) > 1 else columns[0]
            text = pc.binary_join(pa.LargeListArray.from_arrays(pa.array([0, len(lines)], pa.int64()), lines),
                                  pa.scalar("\n", pa.large_string()))[0].as_buffer()
            with open(path / output_file_name(name), "wb") as f:
                f.write(text)
                f.write(b"\n" if len(lines) else b"")
    except OSError as e:
        raise DataError(f"cannot write the results: {e.strerror or e}", file=str(path)) from None


def print_values(frames: dict, out: TextIO) -> None:
    """The values as PSL prints them without an output folder: ``NAME('a', 'b') = 0.5``."""
    for name, frame in frames.items():
        args = [c for c in frame.columns if c.startswith("a")]
        for row in frame.itertuples(index=False):
            values = ", ".join(f"'{getattr(row, c)}'" for c in args)
            out.write(f"{name.upper()}({values}) = {row.value}\n")


def print_metrics(frames: dict, out: TextIO) -> None:
    """MSE, MAE (and AUROC, AUPR for 0/1 truth) of every predicate with truth labels."""
    import numpy as np

    from xcore.psl.model import prediction_metrics

    for name, frame in frames.items():
        truth = frame["truth"].to_numpy(dtype=float)
        if not np.isfinite(truth).any():
            out.write(f"{name}: no truth labels\n")
            continue
        m = prediction_metrics(frame["value"].to_numpy(dtype=float), truth)
        shown = ", ".join(f"{k} {v:.6g}" for k, v in m.items() if k != "n" and not math.isnan(v))
        out.write(f"{name}: {int(m['n'])} atoms with truth; {shown}\n")
