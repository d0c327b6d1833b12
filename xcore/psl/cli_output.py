"""What ``python -m xcore.psl`` writes after inference: the MAP values as PSL writes or prints them,
their metrics against the truth, and whether the optimum is unique.

Imported by the command only once the arguments are read (numpy, pandas and pyarrow load here)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.io.psl_project import output_file_name
from xcore.errors import DataError
from xcore.psl.map_problem import MAPResult
from xcore.psl.model import PSLModel
from xcore.psl.scores import prediction_metrics
from xcore.psl.uniqueness import optimum_spread


def report_uniqueness(model: PSLModel, result: MAPResult, check: bool | None, quiet: bool, err: TextIO,
                      auto_limit: int) -> None:
    """Say whether the MAP optimum is unique (`xcore.psl.uniqueness`): a warning when it is not."""
    prog = model.program_
    if check is None:
        check = prog.n_potentials + prog.C.shape[0] <= auto_limit
        if not check:
            if not quiet:
                err.write(f"optimum uniqueness not checked ({prog.n_potentials:,} potentials; --check-unique checks "
                          "it with two LPs)\n")
            return
    if not check:
        return
    spread = optimum_spread(prog, result.y)
    if not spread.unique:
        store = model.store_
        names = dict(zip(spread.moving[:3], store.atom_text(store.target_ids[spread.moving[:3]])))
        err.write("warning: " + spread.describe(names) + "\n")
    elif not quiet:
        err.write(spread.describe() + "\n")


def target_values(model: PSLModel) -> dict[str, pd.DataFrame]:
    """Per open predicate with targets: a frame of its target atoms' arguments and MAP values."""
    store, y = model.store_, model.y_
    out = {}
    for name, atoms in store.predicates.items():
        if not atoms.n_targets:
            continue
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
    for name, frame in frames.items():
        truth = frame["truth"].to_numpy(dtype=float)
        if not np.isfinite(truth).any():
            out.write(f"{name}: no truth labels\n")
            continue
        m = prediction_metrics(frame["value"].to_numpy(dtype=float), truth)
        shown = ", ".join(f"{k} {v:.6g}" for k, v in m.items() if k != "n" and not math.isnan(v))
        out.write(f"{name}: {int(m['n'])} atoms with truth; {shown}\n")
