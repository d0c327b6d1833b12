"""Aleph's lazy evaluation (``:- lazy_evaluate(gteq/2).``) run by SWI-Prolog on the background's own
definitions: the constants of a clause's lazily evaluated literals, computed from the examples.

Written from Aleph's ``lazy_evaluate/7`` and ``lazy_index_prove1/6`` (our own code). For each lazily
evaluated literal of a clause, in body order: the clause's head is unified with each positive
example in turn and the literals before it (the *prefix*, with the constants of earlier lazy
literals already computed) are proved, every proof; the values its ``+`` and ``-`` arguments take
are collected, a binding equal to (unifying with) an earlier one is not kept again, and the list is
in Aleph's order (newest first, as Aleph's ``asserta`` leaves it). The same over the negative
examples (not for a ``positive_only/1`` predicate: then the negatives' list is empty). The
background's definition is then called once with each ``+``/``-`` argument replaced by the pair of
lists ``[P, N]`` and its ``#`` arguments unbound (``gteq([[10,9,8,5,3],[6,4,2,1]], V)``); its first
answer gives the constants (Aleph keeps up to the mode's recall answers as alternative refinements;
a feature has one). No answer, or a constant that is not ground, leaves the clause without
constants (Aleph drops such a refinement).

Limits as in `xcore.data.io.prolog_saturation`: the prefix and the call pass ``library(sandbox)``
first, each proof runs under a time and depth limit, the process under CPU, memory and wall-clock
limits. One SWI-Prolog process for every clause (each batched over all examples).
"""

from __future__ import annotations

from dataclasses import dataclass

from xcore.data.io.prolog_engine import available
from xcore.data.io.prolog_saturation import run_driver
from xcore.errors import DataError

_LAZY = r"""
% task_main([TaskFile, ExampleFile]): for each task(Clause, Specs) of TaskFile, one line "lazy\tK\tok"
% (after a "const\tK\tLit\tArg\tValue" line per computed constant) or "lazy\tK\tfail".
task_main([TaskFile, ExampleFile]) :-
    read_terms(ExampleFile, Exs),
    read_terms(TaskFile, Ts),
    forall(nth1(K, Ts, T), lazy_task(K, T, Exs)).

lazy_task(K, T, Exs) :-
    (   T = task(Clause, Specs),
        catch(lazy_clause(Clause, Specs, Exs, Consts), E, (format("problem\t~w\t~q~n", [K, E]), fail))
    ->  forall(member(c(I, A, V), Consts), format("const\t~w\t~w\t~w\t~q~n", [K, I, A, V])),
        format("lazy\t~w\tok~n", [K])
    ;   format("lazy\t~w\tfail~n", [K])
    ).

lazy_clause(Clause, Specs, Exs, Consts) :-
    ( Clause = (H :- B) -> true ; H = Clause, B = true ),
    conj_list(B, Lits),
    lazy_specs(Specs, H, Lits, Exs, Consts).

conj_list(true, []) :- !.
conj_list((A, B), [A|Ls]) :- !, conj_list(B, Ls).
conj_list(A, [A]).
list_conj([], true).
list_conj([A], A) :- !.
list_conj([A|As], (A, B)) :- list_conj(As, B).

% lz(I, Bound, Consts, PosOnly): body literal I (1-based) is lazy; Bound its + and - argument
% positions, Consts its # positions. Constants found bind the literal's variables, so a later lazy
% literal's prefix includes them (as in Aleph's lazy_evaluate_refinement).
lazy_specs([], _, _, _, []).
lazy_specs([lz(I, Bound, Cs, PosOnly)|Specs], H, Lits, Exs, Out) :-
    I0 is I - 1, length(Prefix, I0), append(Prefix, [Lit|_], Lits), !,
    list_conj(Prefix, Body),
    ( Body == true -> true ; safe_goal(user:Body) ),
    bindings(pos, Exs, H, Body, Lit, PL),
    ( PosOnly == true -> NL = [] ; bindings(neg, Exs, H, Body, Lit, NL) ),
    functor(Lit, F, N), functor(Call, F, N),
    maplist(value_lists(Call, PL, NL), Bound),
    safe_goal(user:Call),
    call_with_time_limit(__TIME__, call_with_depth_limit(user:Call, 10000, R)),
    R \== depth_limit_exceeded,
    maplist(constant(Call, Lit, I), Cs, Found),
    lazy_specs(Specs, H, Lits, Exs, Rest),
    append(Found, Rest, Out).

value_lists(Call, PL, NL, A) :-
    findall(T, (member(L, PL), arg(A, L, T)), PT),
    findall(T, (member(L, NL), arg(A, L, T)), NT),
    arg(A, Call, [PT, NT]).

constant(Call, Lit, I, A, c(I, A, V)) :-
    arg(A, Call, V), ground(V), arg(A, Lit, V).

% the distinct instances of Lit over every proof of the prefix for each example of Type, newest first
bindings(Type, Exs, H, Body, Lit, Seen) :-
    foldl(example_bindings(Type, H, Body, Lit), Exs, [], Seen).
example_bindings(Type, H, Body, Lit, E, Seen0, Seen) :-    % an unreadable example adds nothing
    (   E = ex(Type1, Ex), Type1 == Type, copy_term(H-Body-Lit, H1-B1-L1), H1 = Ex
    ->  catch(call_with_time_limit(__TIME__,
            findall(L1, (call_with_depth_limit(user:B1, 10000, R), R \== depth_limit_exceeded), Ls)),
            _, Ls = []),
        foldl(add_new, Ls, Seen0, Seen)
    ;   Seen = Seen0
    ).
add_new(L, Seen0, Seen) :-
    (   member(S, Seen0), \+ \+ S = L
    ->  Seen = Seen0
    ;   copy_term(L, L1), Seen = [L1|Seen0]
    ).
"""


@dataclass(frozen=True)
class LazyLiteral:
    """One lazily evaluated literal of a clause: its body position and argument roles (0-based)."""

    literal: int
    bound: tuple[int, ...]
    """``+`` and ``-`` positions: the definition gets the lists ``[P, N]`` of their values there."""
    constants: tuple[int, ...]
    """``#`` positions: unbound in the call, the definition's answer gives them."""
    positive_only: bool = False


def _spec(s: LazyLiteral) -> str:
    ones = lambda xs: "[" + ",".join(str(x + 1) for x in xs) + "]"  # noqa: E731
    return f"lz({s.literal + 1},{ones(s.bound)},{ones(s.constants)},{str(s.positive_only).lower()})"


def lazy_constants(background: bytes, positives: bytes, negatives: bytes,
                   tasks: list[tuple[str, list[LazyLiteral]]], examples: list[tuple[str, int]]
                   ) -> list[dict[tuple[int, int], str] | None]:
    """For each (clause text, lazy literals) in `tasks`: ``{(literal, argument): constant text}`` (0-based,
    the constant as SWI-Prolog writes it, quoted where needed), or None where the definition gave no
    ground answer or the sandbox refused the prefix or the call. The clause text has a fresh variable
    at each lazy ``#`` position. `examples` are (atom text, label 1/0): the training examples whose
    values the definitions see; `positives`/`negatives` the ``.f``/``.n`` texts (recursive calls)."""
    if not tasks:
        return []
    if not available():
        raise DataError("SWI-Prolog (swipl) is not installed: lazily evaluated literals need it", file="background")
    text = "".join(f"task(({c.strip().rstrip('.')}),[{','.join(_spec(s) for s in specs)}]).\n"
                   for c, specs in tasks).encode()
    exs = "".join(f"ex({'pos' if y == 1 else 'neg'},({e.strip().rstrip('.')})).\n"
                  for e, y in sorted(examples, key=lambda ey: -int(ey[1] == 1)) if y in (0, 1)).encode()
    out = run_driver({"bk": background, "pos": positives, "neg": negatives, "tasks": text, "examples": exs},
               ["task", "bk", "pos", "neg", "tasks", "examples"], "computing lazily evaluated constants", _LAZY)
    found: dict[int, dict[tuple[int, int], str]] = {}
    status: dict[int, str] = {}
    for line in out.splitlines():
        parts = line.split("\t", 4)
        if parts[0] == "const" and len(parts) == 5:
            found.setdefault(int(parts[1]) - 1, {})[(int(parts[2]) - 1, int(parts[3]) - 1)] = parts[4]
        elif parts[0] == "lazy" and len(parts) >= 3:
            status[int(parts[1]) - 1] = parts[2]
    if len(status) != len(tasks):
        raise DataError("SWI-Prolog could not read the clauses whose constants are lazily evaluated",
                        file="background")
    return [found.get(k, {}) if status[k] == "ok" else None for k in range(len(tasks))]
