"""Aleph's saturation (the bottom clause of one example) and clause coverage, run by SWI-Prolog on
the whole background (facts and rules, arithmetic helpers such as ``gteq/2`` included), so literals
of rule-defined predicates come out as Aleph's own ``sat/1`` gives them.

The algorithm (our own code, written from Aleph's manual): the example is matched against its
``modeh``; its ``+`` arguments are the known terms of depth 0 and its ``-`` arguments are named but
not inputs. For depth d = 0 .. i-1 every ``modeb`` of a predicate the target's ``determination``
names (in the order of the determinations, a predicate's modes in declaration order) is called for
every binding of its ``+`` placeholders to known terms of the right type with the deepest at depth
d (terms in order of introduction), with its ``-`` and ``#`` placeholders unbound; up to ``recall``
answers are kept (``*``: all, capped); at the last depth a literal that would introduce a new term is
left out (new variables must stay shallower than i). ``#`` arguments keep the answer's constant, ``+``/``-``
arguments become variables (one per term, numbered in order of introduction: A, B, ...); new
``-`` terms have depth d + 1. A literal equal to the example itself and repeated literals are left
out. Positive examples are facts of the target predicate while saturating (recursive definitions
such as ``mem/2`` call them). ``mode/2`` declares both a head and a body mode.

Limits as in `xcore.data.io.prolog_engine`: every instantiated goal passes SWI-Prolog's
``library(sandbox)`` first (a goal that is refused is not called and is reported), runs under a
time and depth limit, and the process has a stack, CPU, memory and wall-clock limit; directives of
the files are read as data (modes, determinations, ``set(i, N)``), never run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np

from xcore.data.io.prolog_engine import MEMORY_BYTES, PROCESS_SECONDS, STACK_LIMIT, available
from xcore.errors import DataError

MAX_RECALL = 1000
"""Answers kept for a ``*`` recall (Aleph: all)."""
TIME_PER_CALL = 2.0

_DRIVER = r"""
:- use_module(library(sandbox)).
:- use_module(library(time)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- style_check(-singleton).
:- style_check(-discontiguous).
:- dynamic xm_modeh/2, xm_modeb/2, xm_det/2, xm_set/2, xm_pos/1, xm_abducible/1.
:- op(500, fy, #).
:- op(500, fy, *).

load_file(File, Role) :-
    setup_call_cleanup(open(File, read, S), read_all(S, Role), close(S)).
read_all(S, Role) :-
    catch(read_term(S, T, [syntax_errors(dec10)]), _, T = skip),
    (   T == end_of_file -> true
    ;   keep(T, Role), read_all(S, Role)
    ).
keep((:- D), _) :- !, directive(D).
keep((?- _), _) :- !.
keep(skip, _) :- !.
keep(T, pos) :- !, assertz(xm_pos(T)), catch(assertz(user:T), _, true).
keep(_, neg) :- !.
keep(T, _) :- catch(assertz(user:T), _, true).
directive(modeh(R, T)) :- !, assertz(xm_modeh(R, T)).
directive(modeb(R, T)) :- !, assertz(xm_modeb(R, T)).
directive(mode(R, T)) :- !, assertz(xm_modeh(R, T)), assertz(xm_modeb(R, T)).
directive(determination(P, Q)) :- !, assertz(xm_det(P, Q)).
directive(abducible(P)) :- !, assertz(xm_abducible(P)).
directive(set(K, V)) :- !, retractall(xm_set(K, _)), assertz(xm_set(K, V)).
directive(dynamic(Spec)) :- !, catch(dynamic(user:Spec), _, true).
directive(_).

% placeholders: +T, -T, #T anywhere in a mode template become variables with (Var, Role, Type)
open_template(T, V, [p(V, R, Ty)]) :- compound(T), T =.. [R, Ty], memberchk(R, [+, -, #]), atomic(Ty), !.
open_template(T, T, []) :- \+ compound(T), !.
open_template(T, G, Ps) :- T =.. [F|As], open_args(As, Gs, Ps), G =.. [F|Gs].
open_args([], [], []).
open_args([A|As], [G|Gs], Ps) :- open_template(A, G, P1), open_args(As, Gs, P2), append(P1, P2, Ps).

depth_limit(I) :- ( xm_set(i, I) -> true ; I = 2 ).
recall_n(*, N) :- !, N = __MAXRECALL__.
recall_n(N, N).

% term table: term(Value, Index), known(Value, Type, Depth)
:- dynamic term/2, known/3, lit/1, next_index/1.
index_of(V, I) :- term(V0, I), V0 == V, !.
index_of(V, I) :- retract(next_index(I)), I1 is I + 1, assertz(next_index(I1)), assertz(term(V, I)).
add_known(V, Ty, D) :- ( known(V0, Ty, _), V0 == V -> true ; assertz(known(V, Ty, D)) ).

answers(G, Ps, Max, Answers) :-
    (   catch(safe_goal(user:G), E, (format("refused\t~q~n", [E]), fail))
    ->  catch(call_with_time_limit(__TIME__,
            findall(G-Ps, limit(Max, (call_with_depth_limit(user:G, 10000, R), R \== depth_limit_exceeded)),
                    Answers)), _, Answers = [])
    ;   Answers = []
    ).

saturate(Ex) :-
    retractall(term(_, _)), retractall(known(_, _, _)), retractall(lit(_)), retractall(next_index(_)),
    assertz(next_index(0)),
    functor(Ex, F, N),
    (   xm_modeh(_, HT), functor(HT, F, N), open_template(HT, HG, HPs), HG = Ex -> true
    ;   format("error\tno modeh matches ~q~n", [Ex]), fail ),
    forall(member(p(V, R, Ty), HPs), ( index_of(V, _), ( R == (+) -> add_known(V, Ty, 0) ; true ) )),
    named(HT, Ex, NH), format("head\t~W~n", [NH, [quoted(true), numbervars(true)]]),
    depth_limit(I), Last is I - 1,
    forall(between(0, Last, D), layer(F/N, Ex, D)),
    findall(L, lit(L), Ls),
    forall(member(L, Ls), (numbered(L, NL), format("lit\t~W~n", [NL, [quoted(true), numbervars(true)]]))).

body_modes(F/N, Modes) :-
    (   \+ xm_det(F/N, _), xm_abducible(F/N)     % an abducible without determinations: the others'
    ->  findall(R-T, ( xm_det(_, P/A), xm_modeb(R, T), functor(T, P, A) ), Modes0)
    ;   findall(R-T, ( xm_det(F/N, P/A), xm_modeb(R, T), functor(T, P, A) ), Modes0)
    ),
    list_to_set_(Modes0, Modes).
list_to_set_([], []).
list_to_set_([X|Xs], [X|Ys]) :- exclude(==(X), Xs, Zs), list_to_set_(Zs, Ys).

layer(Key, Ex, D) :-
    body_modes(Key, Modes),
    forall(member(R-T, Modes), call_mode(R, T, Ex, D)).

call_mode(R, T, Ex, D) :-
    open_template(T, G, Ps),
    include([p(_, Ro, _)]>>(Ro == (+)), Ps, Ins),
    Ins \== [], !,
    findall(B, bind(Ins, D, B), Bs0), list_to_set_(Bs0, Bs),
    recall_n(R, Max),
    forall(member(B, Bs),
           ( copy_term(G-Ps-Ins, G1-Ps1-Ins1), bind_inputs(Ins1, B),
             answers(G1, Ps1, Max, Answers),
             forall(member(A-APs, Answers), record(A, APs, Ex, D)) )).
call_mode(_, _, _, _).

% a binding: one known term per input, in order of term index, the deepest at depth D
bind(Ins, D, Vals) :-
    maplist(candidate, Ins, Vals, Depths),
    max_list(Depths, D).
candidate(p(_, _, Ty), V, Dp) :-
    findall(I-(V0-Dp0), (known(V0, Ty, Dp0), term(V1, I), V1 == V0), Cs0), keysort(Cs0, Cs),
    member(_-(V-Dp), Cs).
bind_inputs([], []).
bind_inputs([p(V, _, _)|Ps], [V|Vs]) :- bind_inputs(Ps, Vs).

record(A, Ps, Ex, D) :-
    ground(A), A \== Ex,
    depth_limit(I), D1 is D + 1,
    ( D1 >= I -> \+ ( member(p(V, (-), _), Ps), \+ ( term(V0, _), V0 == V ) ) ; true ), !,
    (   lit(L0), L0 == A -> true
    ;   assertz(lit(A)),
        forall(member(p(V, R, Ty), Ps),
               ( R == (#) -> true
               ; index_of(V, _), ( R == (-) -> add_known(V, Ty, D1) ; true ) ))
    ).
record(_, _, _, _).

% print a literal with its + and - terms as variables: find its mode again and replace placeholders
numbered(L, NL) :-
    functor(L, F, N), xm_modeb(_, T), functor(T, F, N), named(T, L, NL), !.
numbered(L, L).
named(T, L, NL) :-
    open_template(T, G, Ps), G = L, !,
    open_template(T, NG, NPs),
    maplist(name_arg, Ps, NPs),
    NL = NG.
name_arg(p(V, R, _), p(NV, _, _)) :- ( R == (#) -> NV = V ; index_of(V, I), NV = '$VAR'(I) ).

% coverage: for every clause of ClauseFile, one line of 0/1 over the examples of ExampleFile
cover(ClauseFile, ExampleFile) :-
    read_terms(ExampleFile, Exs),
    read_terms(ClauseFile, Cs),
    forall(member(C, Cs), cover_one(C, Exs)).
read_terms(File, Ts) :-
    setup_call_cleanup(open(File, read, S), read_list(S, Ts), close(S)).
read_list(S, Ts) :-
    catch(read_term(S, T, []), _, (T = '$unreadable', skip(S, 0'\n))),
    ( T == end_of_file -> Ts = [] ; Ts = [T|R], read_list(S, R) ).
cover_one('$unreadable', Exs) :- !,
    findall(?, member(_, Exs), Bits), atomic_list_concat(Bits, Row), format("cover\t~w~n", [Row]).
cover_one(C, Exs) :-
    ( C = (H :- B) -> true ; H = C, B = true ),
    (   catch(safe_goal(user:B), E, (format("refused\t~q~n", [E]), fail))
    ->  findall(Bit, ( member(Ex, Exs), ( covers(H, B, Ex) -> Bit = 1 ; Bit = 0 ) ), Bits)
    ;   findall(0, member(_, Exs), Bits)
    ),
    atomic_list_concat(Bits, Row), format("cover\t~w~n", [Row]).
covers(H, B, Ex) :-
    \+ \+ ( copy_term(H-B, Ex-B1),
             catch(call_with_time_limit(__TIME__, call_with_depth_limit(user:B1, 10000, R)), _, fail),
             R \== depth_limit_exceeded ).

main :-
    current_prolog_flag(argv, [task, Bk, Pos, Neg|Files]), !,   % task_main/1 comes with the caller's code
    load_file(Bk, background), load_file(Pos, pos), load_file(Neg, neg),
    task_main(Files),
    halt.
main :-
    current_prolog_flag(argv, [cover, Bk, Pos, Neg, ClauseFile, ExampleFile]), !,
    load_file(Bk, background), load_file(Pos, pos), load_file(Neg, neg),
    cover(ClauseFile, ExampleFile),
    halt.
main :-
    current_prolog_flag(argv, [Bk, Pos, Neg|Exs]),
    load_file(Bk, background), load_file(Pos, pos), load_file(Neg, neg),
    forall(member(E, Exs), ( term_to_atom(Ex, E), format("example\t~q~n", [Ex]),
                             ( catch(saturate(Ex), Err, (format("error\t~q~n", [Err]))) -> true ; true ),
                             format("end~n") )),
    halt.
"""


@dataclass
class Saturation:
    """The bottom clause of one example: head (Aleph's text) and body literals (Aleph's texts, its
    variable names A, B, ...), with any sandbox refusals or errors."""

    example: str
    body: list[str]
    problems: list[str]
    head: str = ""

    @property
    def text(self) -> str:
        """``head :- l1, l2, ...`` (the head with its variables named as Aleph names them)."""
        head = self.head or self.example
        return head if not self.body else f"{head} :- {', '.join(self.body)}"


def _limits() -> None:  # in the child, before exec
    import resource  # POSIX-only: imported in the child process, where it is used

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (PROCESS_SECONDS, PROCESS_SECONDS))


def run_driver(files: dict[str, bytes], args: list[str], what: str, extra: str = "") -> str:
    """Run the driver on `files` (written to a fresh temporary folder) with `args` (names of those
    files or plain data), under the limits; its standard output. `extra` is more driver code (a
    ``task_main/1`` for ``task`` arguments, as `xcore.data.io.prolog_lazy` gives)."""
    driver = (_DRIVER + extra).replace("__TIME__", str(TIME_PER_CALL)).replace("__MAXRECALL__", str(MAX_RECALL))
    with tempfile.TemporaryDirectory(prefix="xcore-sat-") as tmp:
        paths = {}
        for name, data in {**files, "driver.pl": driver.encode()}.items():
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "wb") as fh:
                fh.write(data)
        cmd = ["swipl", "--no-packs", "--no-signals", "-f", "none", f"--stack-limit={STACK_LIMIT}", "-q",
               "-g", "main", "-t", "halt(1)", paths["driver.pl"], "--", *[paths.get(a, a) for a in args]]
        try:
            proc = subprocess.run(cmd, cwd=tmp, capture_output=True, timeout=PROCESS_SECONDS + 10,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
                                       "LANG": "C.UTF-8"},
                                  preexec_fn=_limits if sys.platform != "win32" else None)
        except subprocess.TimeoutExpired:
            raise DataError(f"SWI-Prolog ran out of time while {what}", file="background") from None
    if proc.returncode != 0 and not proc.stdout:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise DataError(f"SWI-Prolog failed while {what}" + (f": {err[-1]}" if err else ""), file="background")
    return proc.stdout.decode("utf-8", "replace")


def clause_coverage(background: bytes, positives: bytes, negatives: bytes, clauses: list[str],
                    examples: list[str]) -> np.ndarray:
    """(clauses x examples) 0/1: does clause ``head :- body`` cover the example (its head unifies with
    it and its body succeeds, as Aleph's coverage test)? One SWI-Prolog process for all clauses
    (batched per clause over every example); a clause whose body the sandbox refuses covers nothing,
    an unreadable clause gets -1 in its row."""

    if not available():
        raise DataError("SWI-Prolog (swipl) is not installed: coverage of rule-defined features needs it",
                        file="background")
    if not clauses or not examples:
        return np.zeros((len(clauses), len(examples)), dtype=np.int8)
    text = "".join(f"({c.strip().rstrip('.')}).\n" for c in clauses).encode()
    exs = "".join(f"{e.strip().rstrip('.')}.\n" for e in examples).encode()
    out = run_driver({"bk": background, "pos": positives, "neg": negatives, "clauses": text, "examples": exs},
                     ["cover", "bk", "pos", "neg", "clauses", "examples"], "computing coverage")
    rows = [l.split("\t", 1)[1] for l in out.splitlines() if l.startswith("cover\t")]
    if len(rows) != len(clauses) or any(len(r) != len(examples) for r in rows):
        raise DataError("SWI-Prolog could not read the clauses or examples to cover", file="background")
    return np.array([[1 if ch == "1" else -1 if ch == "?" else 0 for ch in r] for r in rows], dtype=np.int8)


def saturate_examples(background: bytes, positives: bytes, negatives: bytes, examples: list[str],
                      settings: dict[str, str] | None = None) -> list[Saturation]:
    """Bottom clauses of `examples` (atom texts such as ``p(3)``) under the ``.b`` background and the
    ``.f``/``.n`` examples, in one SWI-Prolog process; `settings` are extra ``set(K, V)`` directives
    (as an Aleph session's ``?- set(i, 3).``). `DataError` when ``swipl`` is missing or fails."""
    if not available():
        raise DataError("SWI-Prolog (swipl) is not installed: saturation needs it", file="background")
    extra = "".join(f"\n:- set({k}, {v}).\n" for k, v in (settings or {}).items()).encode()
    text = run_driver({"bk": background + extra, "pos": positives, "neg": negatives},
                      ["bk", "pos", "neg", *examples], "saturating")
    out: list[Saturation] = []
    current: Saturation | None = None
    for line in text.splitlines():
        kind, _, rest = line.partition("\t")
        if kind == "example":
            current = Saturation(rest, [], [])
            out.append(current)
        elif current is not None and kind == "head":
            current.head = rest
        elif current is not None and kind == "lit":
            current.body.append(rest)
        elif current is not None and kind in ("refused", "error"):
            current.problems.append(f"{kind}: {rest}")
    if len(out) != len(examples):
        raise DataError("SWI-Prolog failed while saturating (an example could not be read)", file="background")
    return out
