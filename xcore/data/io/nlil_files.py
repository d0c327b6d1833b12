"""NLIL's own data folders (gblackout/NLIL ``data/<task>/``): ``pred.txt`` + labelled atom files.

``pred.txt`` declares each predicate with its argument types, one a line: ``succ(int,int)``.
``fact.txt`` (the knowledge base), ``valid.txt`` and ``test.txt`` hold ``label<TAB>atom`` lines,
label 1 (true) or 0 (false): ``1	succ(0,1)``.

As a dataset: every fact is an observation. The head predicates (option ``heads``, a list or a
comma-separated text; by default the unary predicates of ``test.txt`` with at least two true
atoms, NLIL's learning targets such as ``even``) take their atoms from ``test.txt`` as targets with
the labels as truth, and their facts stay as labelled observations to learn from only where they
are not test atoms. Problems raise `DataError` naming the file and line.
"""

from __future__ import annotations

import re

import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.io.files import FileSet, basename
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError

_DECL = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(\s*([^()]*)\)\s*$")
_ATOM = re.compile(r"^\s*([01](?:\.0*)?)\s*\t\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(([^()]*)\)\s*$")
ROLES = {"fact.txt": "obs", "valid.txt": "valid", "test.txt": "test"}


def looks_like_nlil(files: FileSet) -> bool:
    """A ``pred.txt`` of declarations beside ``fact.txt``."""
    names = {basename(n): n for n in files}
    if "pred.txt" not in names or "fact.txt" not in names:
        return False
    lines = [l for l in files[names["pred.txt"]].decode("utf-8", "replace").splitlines() if l.strip()]
    return bool(lines) and all(_DECL.match(l) for l in lines)


def _read(name: str, data: bytes) -> list[str]:
    try:
        return data.decode("utf-8-sig").splitlines()
    except UnicodeDecodeError as e:
        raise DataError(f"not UTF-8 text (byte {e.start})", file=name, line=data[:e.start].count(b"\n") + 1) from None


def nlil_from_files(files: FileSet, name: str, heads: str | list[str] | None = None) -> RelationalDataset:
    """Load an NLIL data folder (see the module docstring)."""
    names = {basename(n): n for n in files}
    decls: dict[str, tuple[str, ...]] = {}
    pred_file = names["pred.txt"]
    for k, line in enumerate(_read(pred_file, files[pred_file]), 1):
        if not line.strip():
            continue
        m = _DECL.match(line)
        if m is None:
            raise DataError("expected a declaration such as succ(int,int)", file=pred_file, line=k)
        types = tuple(t.strip() for t in m.group(2).split(",") if t.strip())
        if m.group(1) in decls:
            raise DataError(f"predicate {m.group(1)} is declared twice", file=pred_file, line=k)
        decls[m.group(1)] = types
    parts: dict[str, dict[str, list]] = {}
    for base, role in ROLES.items():
        if base not in names:
            continue
        f = names[base]
        for k, line in enumerate(_read(f, files[f]), 1):
            if not line.strip():
                continue
            m = _ATOM.match(line)
            if m is None:
                raise DataError("expected label<TAB>atom, e.g. '1\tsucc(0,1)'", file=f, line=k)
            pred, args = m.group(2), tuple(a.strip() for a in m.group(3).split(",") if a.strip())
            if pred not in decls:
                raise DataError(f"predicate {pred} is not declared in pred.txt", file=f, line=k)
            if len(args) != len(decls[pred]):
                raise DataError(f"{pred} takes {len(decls[pred])} argument(s), {len(args)} given", file=f, line=k)
            parts.setdefault(pred, {}).setdefault(role, []).append((*args, float(m.group(1))))
    if isinstance(heads, str):
        heads = [h.strip() for h in heads.split(",") if h.strip()]
    if heads is None:
        heads = [p for p, t in decls.items() if len(t) == 1
                 and sum(r[-1] >= 0.5 for r in parts.get(p, {}).get("test", [])) >= 2]
    for h in heads:
        if h not in decls:
            raise DataError(f"head predicate {h!r} is not declared in pred.txt", file=pred_file)
    preds, tables = [], {}
    for p, types in decls.items():
        cols = [f"a{i}" for i in range(len(types))]
        frame = lambda rows: pd.DataFrame(rows, columns=[*cols, "value"]).drop_duplicates(cols, keep="last")  # noqa: E731
        obs = frame(parts.get(p, {}).get("obs", []))
        if p in heads:
            test = frame(parts.get(p, {}).get("test", []))
            if len(test):
                key = test[cols].apply(tuple, axis=1) if cols else pd.Series([], dtype=object)
                obs = obs[~obs[cols].apply(tuple, axis=1).isin(set(key))] if len(obs) else obs
            targets = test[cols].assign(value=float("nan"))
            tables[p] = {"obs": obs, "targets": targets, "truth": test}
        else:
            tables[p] = {"obs": obs}
        preds.append(Predicate(p, len(types), types, closed=p not in heads))
    return RelationalDataset(Schema.of(preds), tables, name=name,
                             description=f"NLIL data folder; heads: {', '.join(heads) or 'none'}")
