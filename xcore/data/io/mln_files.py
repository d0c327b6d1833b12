"""Markov logic projects as Alchemy, Tuffy and pracmln users have them: ``.mln`` + ``.db`` files.

A file set with a ``.mln`` program loads as a `RelationalDataset`:

* the program's declarations give the predicates and argument types; Tuffy's ``*`` marks closed
  predicates (missing atoms false); every other predicate is open and all its groundings over the
  type domains that the evidence does not fix become query (target) atoms;
* evidence ``.db`` files: ``Smokes(Anna)`` (true), ``!Smokes(Anna)`` (false), Tuffy's soft evidence
  ``0.8 Smokes(Anna)`` (the atom stays a query atom and gets the unit formula
  ``log(0.8 / 0.2) Smokes(Anna)``, Tuffy's reading); pracmln's ``---`` separates databases (the first
  is used);
* a Tuffy ``query.db`` (atoms with variables, ``Cancer(x)``) or pracmln's ``query.conf``
  (``"queries"``, ``"mln"``, ``"db"``) names the query predicates and picks the program and evidence
  when a folder has several; options ``program`` and ``evidence`` (file names) pick them too;
* type domains: the program's ``type = {...}`` declarations plus every constant written at a
  position of that type in the program or the evidence.

The dataset's `rules` hold the program text (formulas and soft-evidence unit formulas): the Markov
logic page starts from it. Problems raise `DataError` (file, line) or `ParseError` (file, line, column).
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd

from xcore.data.dataset import RelationalDataset
from xcore.data.io.files import FileSet, basename, suffix
from xcore.data.io.limits import Limits
from xcore.data.schema import Predicate, Schema
from xcore.errors import DataError, ParseError
from xcore.logic.mln_evidence import EvidenceAtom, parse_db
from xcore.logic.mln_program import Declaration, MLNProgram
from xcore.logic.mln_syntax import parse_mln

MLN_SUFFIXES = (".mln", ".db", ".conf")
MAX_QUERY_ATOMS = 2_000_000
"""Most open (query) atoms a program may have over its domains."""
MAX_SOFT_EVIDENCE = 5_000
"""Most soft evidence atoms (each becomes a unit formula)."""
_QUERY_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\(([^()]*)\))?\s*$")


def has_mln(files: FileSet) -> bool:
    """True when the file set holds a Markov logic program."""
    return any(suffix(n) == ".mln" for n in files)


def _text(name: str, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise DataError(f"not UTF-8 text (byte {e.start})", file=name, line=line) from None


def _query_predicates(name: str, text: str) -> list[tuple[str, int]] | None:
    """(predicate, line) of a Tuffy query file's atoms (atoms whose arguments are all variables), else None."""
    preds: list[tuple[str, int]] = []
    for number, line in enumerate(re.sub(r"//[^\n]*", "", text).splitlines(), start=1):
        if not line.strip():
            continue
        for part in re.findall(r"[A-Za-z_][A-Za-z0-9_]*\s*(?:\([^()]*\))?", line):
            m = _QUERY_LINE.match(part)
            if m is None:
                return None
            args = [a.strip() for a in (m.group(3) or "").split(",") if a.strip()]
            if any(not (a[0].islower() or a[0] == "?") for a in args):
                return None
            preds.append((m.group(1), number))
        if not re.fullmatch(r"[\sA-Za-z0-9_(),?]*", line):
            return None
    return preds or None


def _check_queries(origins: dict[str, tuple[str, int | None]], declared: object, program: str) -> None:
    """Every query predicate is declared in the program (DataError naming the query's file and line)."""
    for q, (file, line) in origins.items():
        if q not in declared:  # type: ignore[operator]
            raise DataError(f"query predicate {q} is not declared in {basename(program)}", file=file, line=line)


def _pick(names: list[str], wanted: str | None, what: str, files: FileSet) -> str:
    if wanted:
        hit = [n for n in names if n == wanted or basename(n) == basename(wanted)]
        if not hit:
            raise DataError(f"no {what} named {wanted!r}; the files are {', '.join(basename(n) for n in names)}")
        return hit[0]
    if len(names) == 1:
        return names[0]
    raise DataError(f"several {what} files ({', '.join(basename(n) for n in names)}): choose one with the "
                    f"{'program' if what == '.mln' else 'evidence'}= option", file=names[1])


def mln_from_files(files: FileSet, name: str, limits: Limits | None = None, *, program: str | None = None,
                   evidence: str | None = None) -> RelationalDataset:
    """Load a Markov logic project (see the module docstring) from an in-memory file set."""
    texts = {n: _text(n, d) for n, d in files.items() if suffix(n) in MLN_SUFFIXES}
    conf = next((n for n in sorted(texts) if basename(n) == "query.conf"), None)
    queries: list[str] | None = None
    origins: dict[str, tuple[str, int | None]] = {}
    if conf is not None:
        try:
            cfg = json.loads(texts[conf])
        except json.JSONDecodeError as e:
            raise DataError(f"not JSON: {e.msg}", file=conf, line=e.lineno) from None
        if isinstance(cfg, dict):
            program = program or (cfg.get("mln") if isinstance(cfg.get("mln"), str) else None)
            evidence = evidence or (cfg.get("db") if isinstance(cfg.get("db"), str) else None)
            if isinstance(cfg.get("queries"), str) and cfg["queries"].strip():
                queries = [q.strip().split("(")[0] for q in cfg["queries"].split(",") if q.strip()]
                at = texts[conf].find('"queries"')
                origins.update((q, (conf, texts[conf][:at].count("\n") + 1 if at >= 0 else None)) for q in queries)
    mlns = sorted(n for n in texts if suffix(n) == ".mln")
    prog_name = _pick(mlns, program, ".mln", files)
    prog = parse_mln(texts[prog_name], prog_name)
    for formula in prog.formulas:  # every atom names a declared predicate with its arity (file and line)
        prog.variable_types(formula)
    dbs = sorted(n for n in texts if suffix(n) == ".db")
    evidence_files: list[str] = []
    for n in dbs:
        q = _query_predicates(n, texts[n]) if not evidence or basename(n) != basename(evidence) else None
        if q is not None:
            queries = (queries or []) + [p for p, _ in q if p not in (queries or [])]
            for p, line in q:
                origins.setdefault(p, (n, line))
        else:
            evidence_files.append(n)
    _check_queries(origins, prog.declarations, prog_name)
    if evidence:
        evidence_files = [_pick(evidence_files, evidence, ".db", files)]
    elif len(evidence_files) > 1:
        evidence_files = [_pick(evidence_files, None, ".db", files)]
    atoms: list[EvidenceAtom] = []
    notes = list(prog.notes)
    for n in evidence_files:
        text = texts[n]
        if re.search(r"^\s*---", text, re.M):
            first = re.split(r"^\s*---[^\n]*$", text, maxsplit=1, flags=re.M)[0]
            notes.append(f"{basename(n)}: several databases separated by ---; the first is used")
            text = first
        got, domains = parse_db(text, n)
        atoms.extend(got)
        for t, vals in domains.items():
            prog.domains.setdefault(t, []).extend(v for v in vals if v not in prog.domains[t])
    return build_dataset(prog, atoms, name, queries, evidence_files[0] if evidence_files else prog_name, notes)


def build_dataset(prog: MLNProgram, atoms: list[EvidenceAtom], name: str, queries: list[str] | None,
                  evidence_file: str, notes: list[str] | None = None) -> RelationalDataset:
    """The dataset of a parsed program and its evidence atoms (vectorised per predicate)."""
    decls = prog.declarations
    for q in queries or ():
        if q not in decls:
            raise DataError(f"query predicate {q} is not declared in the program", file=evidence_file)
    by_pred = _atoms_by_predicate(prog, atoms, evidence_file)
    domains = _domains(prog, by_pred)
    soft = [a for a in atoms if a.soft]
    if len(soft) > MAX_SOFT_EVIDENCE:
        raise DataError(f"{len(soft):,} soft evidence atoms, above the limit of {MAX_SOFT_EVIDENCE:,}",
                        file=evidence_file, line=soft[MAX_SOFT_EVIDENCE].line)
    preds, tables = [], {}
    total = 0
    for d in decls.values():
        rows = by_pred.get(d.name, [])
        obs, targets, n = _predicate_tables(d, rows, domains)
        total += n
        if total > MAX_QUERY_ATOMS:
            raise DataError(f"the open predicates have {total:,} groundings over their domains, above the "
                            f"limit of {MAX_QUERY_ATOMS:,}; mark evidence predicates closed with *",
                            file=evidence_file)
        preds.append(Predicate(d.name, len(d.types), d.types, closed=d.closed,
                               description="query predicate" if queries and d.name in queries else ""))
        tables[d.name] = {"obs": obs, "targets": targets}
    rules = _program_text(prog) + _soft_evidence_rules(soft)
    desc = "Markov logic program"
    if queries:
        desc += f"; query predicates: {', '.join(queries)}"
    if notes:
        desc += "; " + "; ".join(notes[:5])
    return RelationalDataset(Schema.of(preds), tables, name=name, description=desc, rules=("\n".join(rules),))


def _atoms_by_predicate(prog: MLNProgram, atoms: list[EvidenceAtom],
                        evidence_file: str) -> dict[str, list[EvidenceAtom]]:
    """The evidence atoms grouped by predicate; an undeclared predicate or a wrong arity names its line."""
    decls = prog.declarations
    by_pred: dict[str, list[EvidenceAtom]] = {}
    for a in atoms:
        d = decls.get(a.predicate)
        if d is None:
            raise DataError(f"predicate {a.predicate} is not declared in the program", file=evidence_file,
                            line=a.line)
        if len(a.args) != len(d.types):
            raise DataError(f"{a.predicate} takes {len(d.types)} argument(s), {len(a.args)} given",
                            file=evidence_file, line=a.line)
        by_pred.setdefault(a.predicate, []).append(a)
    return by_pred


def _domains(prog: MLNProgram, by_pred: dict[str, list[EvidenceAtom]]) -> dict[str, set[str]]:
    """Each type's constants: the program's own and every one the evidence names (empty when none)."""
    decls = prog.declarations
    domains = {t: set(v) for t, v in prog.type_constants().items()}
    for p, rows in by_pred.items():
        for k, typ in enumerate(decls[p].types):
            domains.setdefault(typ, set()).update(r.args[k] for r in rows)
    for d in decls.values():
        for typ in d.types:
            domains.setdefault(typ, set())
    return domains


def _predicate_tables(d: Declaration, rows: list[EvidenceAtom],
                      domains: dict[str, set[str]]) -> tuple[pd.DataFrame, pd.DataFrame, int]:
    """(observations, query targets, groundings counted) of one declared predicate: an open predicate's
    targets are its groundings without evidence, soft evidence as their prior value."""
    cols = [f"a{k}" for k in range(len(d.types))]
    obs = pd.DataFrame([(*r.args, r.value) for r in rows if not r.soft], columns=[*cols, "value"])
    obs = obs.drop_duplicates(subset=cols, keep="last")
    if d.closed:
        return obs, pd.DataFrame(columns=[*cols, "value"]), 0
    n = math.prod(len(domains[t]) for t in d.types)
    if n > MAX_QUERY_ATOMS:
        return obs, pd.DataFrame(columns=[*cols, "value"]), n  # the caller raises on the total
    if cols:
        grid = pd.MultiIndex.from_product([sorted(domains[t]) for t in d.types], names=cols).to_frame(index=False)
    else:
        grid = pd.DataFrame(index=[0])
    if len(obs):
        merged = grid.merge(obs[cols], on=cols, how="left", indicator=True)
        grid = merged[merged["_merge"] == "left_only"].drop(columns="_merge")
    targets = grid.reset_index(drop=True)
    targets["value"] = np.nan
    softs = {r.args: r.value for r in rows if r.soft}
    if softs and len(targets):
        key = targets[cols].astype(str).agg("\x1f".join, axis=1) if cols else pd.Series([""])
        lookup = {"\x1f".join(k): v for k, v in softs.items()}
        targets["value"] = key.map(lookup).astype(float).to_numpy()
    return obs, targets, n


def _soft_evidence_rules(soft: list[EvidenceAtom]) -> list[str]:
    """Soft evidence atoms as unit clauses weighted by their log-odds."""
    out = []
    for a in soft:
        p = min(max(a.value, 1e-9), 1 - 1e-9)
        args = ", ".join(json.dumps(x) for x in a.args)
        out.append(f"{math.log(p / (1 - p))!r} {a.predicate}({args})")
    return out


def _program_text(prog: MLNProgram) -> list[str]:
    """The program's declarations, domains and formulas as lines that `parse_mln` reads back."""
    lines = [f"{'*' if d.closed else ''}{d.name}({', '.join(t + ('!' if k in d.functional else '') for k, t in enumerate(d.types))})"
             for d in prog.declarations.values()]
    lines += [f"{t} = {{{', '.join(json.dumps(v) for v in vals)}}}" for t, vals in prog.domains.items() if vals]
    for f in prog.formulas:
        text = f.text
        if f.is_hard:
            lines.append(text + ".")
        else:
            lines.append(f"{'@' if f.fixed else ''}{f.weight!r} {text}")
    return lines


def parse_error_as_data(e: ParseError) -> DataError:
    """A `ParseError` as the `DataError` loaders raise (file, line, column in the message)."""
    return DataError(f"column {e.column}: {e.problem}", file=e.source, line=e.line)
