"""Background knowledge defined by clauses (Aleph ``.b`` files), run by SWI-Prolog with limits.

`materialise` hands every background clause (facts and rules; directives are dropped, never run)
to one ``swipl`` process, which asserts them and, for each predicate defined by a rule (not an
Aleph hook such as ``aleph_portray`` and not a target predicate), enumerates its ground answers:
``nhas_gills(X) :- animal(X), not(has_gills(X))`` becomes facts like any other, so features over
it run on the fast path. Each predicate is first checked with SWI-Prolog's ``library(sandbox)``
(``safe_goal/1``: everything it can reach must be free of file, shell, network and flag side
effects) and then enumerated under a time limit, a depth limit and a cap on answers; the process
has a stack limit, a CPU and memory rlimit and a wall-clock timeout, runs in an empty temporary
folder without the user's init file. Predicates that need bound arguments (``gteq(X, V)``:
arithmetic), answer with variables, run out of limits or are refused stay rules, listed in the
dataset's description. Without ``swipl`` on the PATH nothing is materialised (the description says so).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np

from xcore.data.io.files import FileSet, suffix

TIME_PER_PREDICATE = 2.0
"""Seconds one predicate's enumeration may take."""
MAX_ANSWERS = 100_000
DEPTH_LIMIT = 10_000
STACK_LIMIT = "512m"
MEMORY_BYTES = 2 * 1024 ** 3
PROCESS_SECONDS = 120
HOOKS = frozenset({"aleph_portray", "portray", "refine", "false", "prune", "cost", "constraint", "example",
                   "modeh", "modeb", "determination", "set", "lteq", "gteq"})
"""Aleph hooks and settings (never enumerated). ``lteq``/``gteq`` are Aleph's threshold helpers:
they compute thresholds from bound inputs, so enumerating them means nothing."""

_DRIVER = r"""
:- use_module(library(sandbox)).
:- use_module(library(time)).
:- style_check(-singleton).
:- style_check(-discontiguous).

load_background(File) :-
    setup_call_cleanup(open(File, read, S), read_all(S), close(S)).
read_all(S) :-
    catch(read_term(S, T, [syntax_errors(dec10)]), _, T = skip),
    (   T == end_of_file -> true
    ;   keep(T), read_all(S)
    ).
keep((:- _)) :- !.
keep((?- _)) :- !.
keep(skip) :- !.
keep(T) :- catch(assertz(user:T), _, true).

report(Name/Arity) :-
    functor(G, Name, Arity),
    (   catch(safe_goal(user:G), E, (format("refused\t~w/~w\t~q~n", [Name, Arity, E]), fail))
    ->  catch(call_with_time_limit(__TIME__,
            findall(G, limit(__MAX__, call_with_depth_limit(user:G, __DEPTH__, R)), L0)), E2,
            (format("failed\t~w/~w\t~q~n", [Name, Arity, E2]), fail)),
        include(ground, L0, L), length(L0, N0), length(L, N),
        format("count\t~w/~w\t~w\t~w~n", [Name, Arity, N, N0]),
        forall(member(A, L), (writeq(A), write('.'), nl))
    ;   true
    ).
report(_).

main :-
    current_prolog_flag(argv, [File|Specs]),
    load_background(File),
    forall(member(Spec, Specs), (term_to_atom(P, Spec), report(P))),
    halt.
"""


def available() -> bool:
    """True when SWI-Prolog (``swipl``) is on the PATH."""
    return shutil.which("swipl") is not None


def _limits() -> None:  # runs in the child before exec
    import resource  # POSIX-only: imported in the child process, where it is used

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (PROCESS_SECONDS, PROCESS_SECONDS))


def _heads(rules: list[tuple[str, int, str]]) -> dict[tuple[str, int], str]:
    """(name, arity) of each rule head -> the file of its first clause."""
    out: dict[tuple[str, int], str] = {}
    for file, _, text in rules:
        head = re.split(r":-", text, maxsplit=1)[0].strip().rstrip(".").strip()
        m = re.match(r"^([a-z][A-Za-z0-9_]*)\s*(\((.*)\))?\s*$", head, re.S)
        if m is None:
            continue
        arity = _arity(m.group(3)) if m.group(2) else 0
        out.setdefault((m.group(1), arity), file)
    return out


def _arity(args: str) -> int:
    depth, n = 0, 1
    quote = None
    for ch in args:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            n += 1
    return n


def materialise(files: FileSet, parsed: list[tuple[str, str, Any]], rules: list[tuple[str, int, str]],
                parse_prolog: Any) -> tuple[dict[tuple[str, int], tuple[list, str]], list[str]]:
    """Ground answers of the rule-defined background predicates (see the module docstring):
    ``{(name, arity): (argument columns, file)}`` and notes for the dataset's description;
    `parse_prolog` reads the engine's answers (the fact reader of `xcore.data.io.prolog`, passed in so
    the two modules do not import each other)."""

    targets = {key for _, role, facts in parsed if role != "background" for key in facts.atoms}
    wanted = {k: f for k, f in _heads(rules).items() if k[0] not in HOOKS and k not in targets}
    notes = [f"{len(rules)} background clause(s) are rules"]
    if not wanted:
        return {}, notes
    if not available():
        notes.append("SWI-Prolog (swipl) is not installed: rule-defined predicates "
                     f"{', '.join(f'{n}/{a}' for n, a in wanted)} are not evaluated")
        return {}, notes
    out = _run_swipl(files, wanted)
    if out is None:
        notes.append("SWI-Prolog ran out of time; rule-defined predicates are not evaluated")
        return {}, notes
    derived, made, kept = _answers(out, wanted, parse_prolog)
    if made:
        notes.append("evaluated by SWI-Prolog: " + ", ".join(made))
    if kept:
        notes.append("kept as rules: " + ", ".join(kept))
    return derived, notes


def _run_swipl(files: FileSet, wanted: dict[tuple[str, int], str]) -> str | None:
    """The sandboxed SWI-Prolog driver's output for the `wanted` predicates over the background files
    (None when it ran out of time)."""
    background = b"\n".join(files[f] for f in sorted(files) if suffix(f) in (".b", ".pl"))
    driver = (_DRIVER.replace("__TIME__", str(TIME_PER_PREDICATE)).replace("__MAX__", str(MAX_ANSWERS))
              .replace("__DEPTH__", str(DEPTH_LIMIT)))
    with tempfile.TemporaryDirectory(prefix="xcore-prolog-") as tmp:
        bk, drv = os.path.join(tmp, "background.txt"), os.path.join(tmp, "driver.pl")
        with open(bk, "wb") as fh:
            fh.write(background)
        with open(drv, "w", encoding="utf-8") as fh:
            fh.write(driver)
        cmd = ["swipl", "--no-packs", "--no-signals", "-f", "none", f"--stack-limit={STACK_LIMIT}", "-q",
               "-g", "main", "-t", "halt(1)", drv, "--", bk, *[f"{n}/{a}" for n, a in wanted]]
        # after "--" the arguments are data for the driver, never files swipl would load
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, timeout=PROCESS_SECONDS + 10,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp, "LANG": "C.UTF-8"},
                                  preexec_fn=_limits if sys.platform != "win32" else None)
        except subprocess.TimeoutExpired:
            return None
    return proc.stdout.decode("utf-8", "replace")


def _answers(out: str, wanted: dict[tuple[str, int], str],
             parse_prolog: Any) -> tuple[dict[tuple[str, int], tuple[list, str]], list[str], list[str]]:
    """(answers per predicate, predicates evaluated, predicates kept as rules with why) from the driver's output."""
    counts = {}
    for line in out.splitlines():
        parts = line.split("\t")
        if parts[0] in ("count", "refused", "failed") and len(parts) >= 3:
            counts[parts[1]] = (parts[0], parts[2:])
    facts_text = "\n".join(l for l in out.splitlines() if l and l.split("\t")[0] not in ("count", "refused", "failed"))
    derived: dict[tuple[str, int], tuple[list, str]] = {}
    try:
        facts = parse_prolog(facts_text, "swipl answers") if facts_text.strip() else None
    except Exception:  # answers we cannot read stay rules
        facts = None
    made, kept = [], []
    for key, file in wanted.items():
        spec = f"{key[0]}/{key[1]}"
        status = counts.get(spec)
        blocks = facts.atoms.get(key) if facts is not None else None
        if status and status[0] == "count" and blocks:
            cols = [c for c in zip(*[b[0] for b in blocks])] if key[1] else []
            derived[key] = ([np.concatenate([np.asarray(c, dtype=object) for c in col]) for col in cols], file)
            made.append(f"{spec} ({status[1][0]} answers)")
        else:
            why = "refused by the sandbox" if status and status[0] == "refused" else \
                "no ground answers" if status and status[0] == "count" else "failed or needs bound arguments"
            kept.append(f"{spec} ({why})")
    return derived, made, kept
