"""Prolog fact files in the Aleph convention: ``.b`` background, ``.f`` positives, ``.n`` negatives.

Only ground facts are read. ``%`` and ``/* */`` comments and directives (``:-``, ``?-``, ``!-``,
also over several lines) are skipped, except that Aleph ``modeh``/``modeb`` declarations give
argument types (``+car`` -> type ``car``). A directive runs to its own ``.`` and must be one
Prolog term: one that is not (``:- foo p(a).``, ``:- foo :- p(a).``, what a missing ``.`` makes)
raises `DataError` with its line instead of swallowing the fact. Several clauses may share a
line. Arguments may be atoms, quoted atoms (unquoted on reading), numbers (kept as written), or
lists and compound terms (kept as their text without spaces, e.g. ``[a,b]``). A rule or a variable raises
`DataError` naming file and line.

``.b`` and ``.pl`` facts become observations with value 1; ``.f`` atoms become targets with
truth 1 and ``.n`` atoms targets with truth 0 (their predicates are open). A name used with two
arities (``shape/1`` and ``shape/2``) keeps its name for the arity with more facts; the other
becomes ``shape_1`` (its description says ``Prolog predicate shape/1``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from xcore.data.dataset import RelationalDataset
from xcore.data.io.assemble import Parts, add, atom_frame, build_dataset, check_predicate_count
from xcore.data.io.columnar import POOL, check_text, normalised_bytes
from xcore.data.io.files import FileSet, Source, read_source, source_label, suffix, unique_names
from xcore.data.io.limits import DEFAULT_LIMITS, Limits
from xcore.data.io.manifest import MAX_ARITY
from xcore.data.io.prolog_directive import check_directive
from xcore.data.io.prolog_engine import materialise
from xcore.data.io.prolog_facts import parse_fact
from xcore.data.io.prolog_text import QUOTED, short
from xcore.data.schema import Predicate
from xcore.errors import DataError
from xcore.logic.modes import read_declarations

ROLES = {".b": "background", ".pl": "background", ".f": "positive", ".n": "negative"}
"""File role by extension."""

# Possessive quantifiers (*+, ++) keep every pattern linear: no backtracking, no ReDoS.
_STRIP = re.compile(rf"{QUOTED}|%[^\n]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/)?")
_SCAN = re.compile(rf"\s*+(?:(?P<c>(?:{QUOTED}|[^'\".]|\.(?![\s]|$))++\.)(?=\s|$)|(?P<bad>\S))")
_MODE = re.compile(r"^\s*[:?!]-\s*mode[hb]?\s*\(\s*[^,]+,\s*([a-z][A-Za-z0-9_]*)\s*\((.*)\)\s*\)\s*\.$", re.S)
_MODE_ARG = re.compile(r"^\s*[-+#]\s*([a-z][A-Za-z0-9_]*)\s*$")
# A directive runs into the next clause when, across a line break, a term ends and another starts
# (``:- foo`` then ``p(a).``): Prolog would need an operator or a comma there.
_RUN_ON = re.compile(r"[A-Za-z0-9_)\]'\"][ \t]*\n\s*(?:[A-Za-z0-9_'\"]|[:?!]-)")
MAX_CLAUSE_CHARS = 65_536
"""Longest clause (fact or directive) read, in characters; longer ones are refused unparsed."""


@dataclass
class PrologFacts:
    """Ground facts of one file grouped by (name, arity), plus types from mode declarations."""

    atoms: dict[tuple[str, int], list[tuple[list, np.ndarray]]] = field(default_factory=dict)
    """Per (name, arity), blocks of atoms: argument columns and their 1-based lines."""
    modes: dict[tuple[str, int], tuple[str, ...]] = field(default_factory=dict)
    rules: list[tuple[int, str]] = field(default_factory=list)
    """Background clauses that are not ground facts (rules, facts with variables), with their lines:
    kept as text for a Prolog engine (`xcore.data.io.prolog_engine`), never evaluated here."""

    def add_block(self, key: tuple[str, int], columns: list, lines: np.ndarray) -> None:
        """Add atoms of one predicate as argument columns and lines."""
        if len(lines):
            self.atoms.setdefault(key, []).append((columns, np.asarray(lines, dtype=np.int64)))


def load_prolog(source: Source, name: str | None = None, *,
                limits: Limits | None = None) -> RelationalDataset:
    """Load Prolog fact files (a folder, a file, or uploads); roles come from the extensions."""
    files = read_source(source, limits, suffixes=tuple(ROLES))
    return prolog_from_files(files, name or source_label(source), limits)


def prolog_from_files(files: FileSet, name: str, limits: Limits | None = None) -> RelationalDataset:
    """Build a dataset from in-memory Prolog files (``.b``/``.pl``, ``.f``, ``.n``)."""
    parsed: list[tuple[str, str, PrologFacts]] = []
    for file in sorted(files):
        role = ROLES.get(suffix(file))
        if role is None:
            raise DataError("not a Prolog fact file (expected .b, .pl, .f or .n)", file=file)
        check_text(files[file], file)  # the errors of decode_text, without the whole text as a string
        parsed.append((file, role, _parse(normalised_bytes(files[file]), file)))
    rules = [(file, line, text) for file, role, f in parsed for line, text in f.rules]
    if rules:
        derived, notes = materialise(files, parsed, rules, parse_prolog)
        notes += _lazy_notes(files)
        for key, (args, file) in derived.items():
            facts = PrologFacts()
            facts.add_block(key, args, np.zeros(len(args[0]) if args else 0, dtype=np.int64))
            parsed.append((file, "background", facts))
    if not any(f.atoms for _, _, f in parsed):
        declared = {k: t for _, _, f in parsed for k, t in f.modes.items()}
        if declared:  # settings and modes only (Aleph's interactive problems): the declared predicates, empty
            preds = [Predicate(n, a, types=t, closed=False) for (n, a), t in declared.items()]
            return build_dataset(preds, {}, name, "Aleph settings and mode declarations only: no facts or examples")
        raise DataError("no ground facts found" + (" (the background only defines rules)" if rules else ""),
                        file=parsed[0][0] if parsed else name)
    names = _predicate_names(parsed)
    check_predicate_count(len(names), limits, *_first_over_limit(parsed, names, limits))
    modes: dict[tuple[str, int], tuple[str, ...]] = {}
    open_keys: set[tuple[str, int]] = set()
    for _, role, facts in parsed:
        for key, types in facts.modes.items():
            modes.setdefault(key, types)
        if role != "background":
            open_keys.update(facts.atoms)
    preds = []
    for key, pname in names.items():
        types = modes.get(key, ())
        renamed = pname != key[0]
        preds.append(Predicate(pname, key[1], types=types, closed=key not in open_keys,
                               description=f"Prolog predicate {key[0]}/{key[1]}" if renamed else ""))
    parts: Parts = {}
    for file, role, facts in parsed:
        for key, blocks in facts.atoms.items():
            for args, ln in blocks:
                _add_atoms(parts, names[key], role, args, file, ln)
    ds = build_dataset(preds, parts, name)
    if rules:
        ds.description = (ds.description + " " if ds.description else "") + "; ".join(notes)
        # the background as written: engines (saturation, coverage of features over rule-defined
        # predicates such as gteq/2) run it; part of the fingerprint, so a changed rule is new data
        ds.rules = tuple(normalised_bytes(files[f]).decode("utf-8", "replace")
                         for f in sorted(files) if ROLES.get(suffix(f)) == "background")
    return ds


def _lazy_notes(files: FileSet) -> list[str]:
    """The background's ``lazy_evaluate/1`` declarations, for the description (the declarations stay in
    `RelationalDataset.rules`, where DRM reads them: `xcore.logic.modes.read_declarations`)."""
    text = "\n".join(normalised_bytes(files[f]).decode("utf-8", "replace")
                     for f in sorted(files) if ROLES.get(suffix(f)) == "background")
    lang = read_declarations(text)
    if lang is None or not lang.lazy:
        return []
    return ["lazily evaluated (Aleph's lazy_evaluate: constants computed from the covered examples): "
            + ", ".join(f"{n}/{a}" for n, a in lang.lazy)]


def _add_atoms(parts: Parts, pred: str, role: str, args: list, file: str, ln: np.ndarray) -> None:
    """Atoms of one file as observations (background) or targets with truth 1/0 (.f/.n)."""
    if role == "background":
        add(parts, pred, "obs", atom_frame(args, None, file, ln))
    else:
        add(parts, pred, "targets", atom_frame(args, None, file, ln))
        add(parts, pred, "truth", atom_frame(args, 1.0 if role == "positive" else 0.0, file, ln))


def _first_over_limit(parsed: list[tuple[str, str, PrologFacts]], names: dict, limits: Limits | None
                      ) -> tuple[str, int | None]:
    """File and first line of the predicate past `Limits.max_predicates` (in file order)."""
    limit = (limits or DEFAULT_LIMITS).max_predicates
    if len(names) <= limit:
        return parsed[0][0], None
    seen: set = set()
    for file, _, facts in parsed:
        firsts = {key: min(int(ln[0]) for _, ln in blocks) for key, blocks in facts.atoms.items()}
        for key, first in sorted(firsts.items(), key=lambda kv: kv[1]):
            if key not in seen:
                seen.add(key)
                if len(seen) > limit:
                    return file, first
    return parsed[0][0], None


def _predicate_names(parsed: list[tuple[str, str, PrologFacts]]) -> dict[tuple[str, int], str]:
    """Final predicate name of each (name, arity), renaming arity clashes (see module doc)."""
    counts: Counter = Counter()
    for _, _, facts in parsed:
        for key, blocks in facts.atoms.items():
            counts[key] += sum(len(ln) for _, ln in blocks)
    by_name: dict[str, list[tuple[str, int]]] = {}
    for key in counts:
        by_name.setdefault(key[0], []).append(key)
    taken = {k[0] for k in counts}
    out: dict[tuple[str, int], str] = {}
    for base, keys in by_name.items():
        keep = max(keys, key=lambda k: (counts[k], k[1]))
        for key in keys:
            if key == keep:
                out[key] = base
            else:
                new = unique_names([*sorted(taken), f"{base}_{key[1]}"])[-1]
                taken.add(new)
                out[key] = new
    return out


# ---------------------------------------------------------------------- parsing
def parse_prolog(text: str, file: str) -> PrologFacts:
    """Ground facts and mode types of a Prolog text; rules and variables raise DataError.

    Lines that are one simple fact (``name(a, 1, b).``: bare atoms and numbers, at most
    `MAX_ARITY` of them) and follow a line ending in ``.`` are read columnar, all at once; every
    other line goes through the clause scanner below, with the same errors and lines as before.
    """
    return _parse(text.encode("utf-8"), file)


def _parse(data: bytes, file: str) -> PrologFacts:
    """`parse_prolog` of UTF-8 bytes with ``\n`` line breaks (no BOM)."""
    out = PrologFacts()
    rest = _fast_facts(data, out) if b"/*" not in data and len(data) > FAST_MIN_CHARS else data
    if rest is None:  # every line was a simple fact or blank
        return out
    rows_by_key: dict[tuple[str, int], tuple[list[tuple[str, ...]], list[int]]] = {}
    _scan_clauses(rest.decode("utf-8"), file, out, rows_by_key)
    for key, (rows, lines) in rows_by_key.items():
        out.add_block(key, [np.asarray(col, dtype=object) for col in zip(*rows)] if key[1] else [], lines)
    return out


FAST_MIN_CHARS = 0
"""Texts shorter than this are scanned clause by clause only (0: the columnar path always runs,
so the tests of small files exercise it too)."""
_NAME = r"[a-z][A-Za-z0-9_]*"
_ARG = r"[a-z][A-Za-z0-9_]*|[+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"  # as _SIMPLE_ARG
_SPACE = r"[ \t\f\r\v]*"  # ASCII spaces only: a line with other spaces goes to the scanner


def _fact_pattern(arity: int) -> str:
    """RE2 pattern of one line holding one simple fact of `arity` (captures name and arguments).

    Lines keep their line break, hence the optional ``\n`` before the end."""
    args = f"{_SPACE},{_SPACE}".join(f"(?P<a{j}>{_ARG})" for j in range(arity))
    body = rf"{_SPACE}\({_SPACE}{args}{_SPACE}\)" if arity else ""
    return rf"^{_SPACE}(?P<name>{_NAME}){body}{_SPACE}\.{_SPACE}\n?$"


def _lines(data: bytes) -> pa.LargeStringArray:
    """The lines of `data` (each with its line break) as an Arrow array over the same bytes."""
    breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
    ends = breaks if len(breaks) and breaks[-1] == len(data) else np.append(breaks, len(data))
    offsets = np.concatenate(([0], ends)).astype(np.int64)
    return pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))


def _fast_facts(data: bytes, out: PrologFacts) -> bytes | None:
    """Read the simple-fact lines of `data` into `out` columnar; the rest for the scanner.

    Returns the bytes with those lines blanked (line numbers kept), or None when nothing is left.
    """
    lines = _lines(data)
    blank, candidate, arity = _candidates(lines)
    fast = np.zeros(len(lines), dtype=bool)
    for k in np.unique(arity[candidate]):
        at = np.flatnonzero(candidate & (arity == k))
        subset = lines if len(at) == len(lines) else lines.take(pa.array(at))
        fields = pc.extract_regex(subset, _fact_pattern(int(k)))
        del subset
        matched = fields.is_valid().to_numpy(zero_copy_only=False)
        if not matched.any():
            continue
        if not matched.all():
            fields, at = fields.filter(pa.array(matched)), at[matched]
        fast[at] = True
        captured = [fields.field(j) for j in range(int(k) + 1)]  # name, then the arguments
        del fields
        _add_fact_blocks(out, captured, at + 1)
    if fast.all() or (fast | blank).all():
        return None
    if not fast.any():
        return data
    rest = pc.if_else(pa.array(fast), pa.scalar("\n", pa.large_string()), lines)
    joined = pc.binary_join(pa.LargeListArray.from_arrays(pa.array([0, len(rest)], pa.int64()), rest),
                            pa.scalar("", pa.large_string()))
    return joined[0].as_buffer().to_pybytes()


def _candidates(lines: pa.LargeStringArray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per line: blank, may be one simple fact (see `_fast_facts`), and its arity if so."""
    blank = pc.match_substring_regex(lines, r"^\s*$").to_numpy(zero_copy_only=False)
    # a fact line only starts a clause when the line before (ignoring blank ones) ended one
    ends = pc.match_substring_regex(lines, r"\.\s*$").to_numpy(zero_copy_only=False)
    nonblank = np.flatnonzero(~blank)
    candidate = ends & ~blank
    candidate[nonblank[1:]] &= ends[nonblank[:-1]]
    del ends, nonblank
    candidate &= pc.binary_length(lines).to_numpy(zero_copy_only=False) <= MAX_CLAUSE_CHARS
    opens = pc.count_substring(lines, "(").to_numpy(zero_copy_only=False)
    candidate &= opens <= 1
    arity = np.where(opens > 0, pc.count_substring(lines, ",").to_numpy(zero_copy_only=False) + 1, 0)
    candidate &= arity <= MAX_ARITY
    return blank, candidate, arity.astype(np.int32)


def _add_fact_blocks(out: PrologFacts, captured: list[pa.Array], lines: np.ndarray) -> None:
    """Facts of one arity (captured name, then argument columns) as one block per predicate name.

    Empties `captured` as it goes: each column is dropped once sorted by name (memory)."""
    names = pc.dictionary_encode(captured.pop(0))
    codes = names.indices.to_numpy(zero_copy_only=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(np.bincount(codes, minlength=len(names.dictionary)))))
    arity, columns, take = len(captured), [], pa.array(order)
    while captured:
        columns.append(pc.take(captured.pop(0), take))
    POOL.release_unused()  # the unsorted columns' memory back to the system
    lines = lines[order]
    for g, name in enumerate(names.dictionary.to_pylist()):
        lo, hi = int(bounds[g]), int(bounds[g + 1])
        out.add_block((name, arity), [pa.chunked_array([c.slice(lo, hi - lo)]).to_pandas().array for c in columns],
                      lines[lo:hi])


def _scan_clauses(text: str, file: str, out: PrologFacts,
                  rows_by_key: dict[tuple[str, int], tuple[list[tuple[str, ...]], list[int]]]) -> None:
    """Scan `text` clause by clause: facts into `rows_by_key`, mode declarations into `out`."""
    try:
        text = _STRIP.sub(_strip_comment, text)
    except _Unterminated as e:
        raise DataError("unterminated /* comment", file=file, line=text.count("\n", 0, e.args[0]) + 1) from None
    # without the trailing whitespace: finditer would retry the failing `\s*+` at every position of
    # a whitespace run that ends the text (quadratic; blanked fact lines leave long runs)
    text = text.rstrip()
    line, prev = 1, 0
    for m in _SCAN.finditer(text):
        start = m.start("c") if m["c"] is not None else m.start("bad")
        line += text.count("\n", prev, start)
        prev = start
        if m["bad"] is not None:
            raise DataError(_scan_problem(text, start), file=file, line=line)
        clause = m["c"]
        if len(clause) > MAX_CLAUSE_CHARS:
            raise DataError(f"clause of {len(clause):,} characters, above the limit of "
                            f"{MAX_CLAUSE_CHARS:,}", file=file, line=line)
        if clause[:2] in (":-", "?-", "!-"):
            run_on = _RUN_ON.search(clause)
            if run_on:
                raise DataError(f"directive {short(clause[:run_on.start() + 1])!r} does not end with "
                                f"'.' (it runs into line {line + clause.count(chr(10), 0, run_on.end())})",
                                file=file, line=line)
            check_directive(clause, file, line)
            mode = _MODE.match(clause)
            if mode:
                _record_mode(out, mode)
            continue
        try:
            name, args = parse_fact(clause, file, line)
        except DataError as e:
            if ROLES.get(suffix(file)) != "background" or "only ground facts" not in e.problem:
                raise
            out.rules.append((line, clause))
            continue
        rows, lines = rows_by_key.setdefault((name, len(args)), ([], []))
        rows.append(args)
        lines.append(line)


def _scan_problem(text: str, start: int) -> str:
    """Why no clause could be read at `start`: an unterminated quote or a missing end dot."""
    rest = text[start:text.find("\n", start) if "\n" in text[start:] else len(text)]
    unquoted = re.sub(QUOTED, "", rest)
    if "'" in unquoted or '"' in unquoted:
        return "unterminated quoted atom"
    return (f"cannot read {short(rest)!r}: every clause must end with '.' followed by a space "
            f"or line break")


class _Unterminated(Exception):
    """Raised inside re.sub for a /* comment without */ (carries its offset)."""


def _strip_comment(m: re.Match) -> str:
    s = m.group(0)
    if s.startswith("%"):
        return ""
    if s.startswith("/*"):
        if len(s) < 4 or not s.endswith("*/"):
            raise _Unterminated(m.start())
        return "\n" * s.count("\n")
    return s


def _record_mode(out: PrologFacts, mode: re.Match) -> None:
    args = mode[2].split(",") if mode[2].strip() else []
    types = [_MODE_ARG.match(a) for a in args]
    if all(types):
        out.modes.setdefault((mode[1], len(args)), tuple(t[1] for t in types))  # type: ignore[index]
