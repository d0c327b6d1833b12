"""Markov logic programs (`MLNProgram`): declarations, domains, formulas and their clauses.

The syntax they are read from is in `xcore.logic.mln_syntax`; the clause construction (quantifier
expansion, NNF, CNF) in `xcore.logic.mln_trees`.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

from xcore.errors import ParseError
from xcore.logic.ast import Constant, Literal, Rule, Variable
from xcore.logic.mln_trees import (
    MAX_EXPANSION,
    Derive,
    condition_of,
    expand_quantifiers,
    substitute,
    to_cnf,
    to_nnf,
    tree_atoms,
)


@dataclass(frozen=True)
class Declaration:
    """A predicate declaration: argument types, Tuffy's closed-world mark, functional arguments."""

    name: str
    types: tuple[str, ...]
    closed: bool = False
    functional: tuple[int, ...] = ()
    line: int = 0


@dataclass(frozen=True)
class Formula:
    """One first-order formula: syntax tree, weight (None: hard), source text and line."""

    tree: tuple
    weight: float | None
    text: str
    line: int
    fixed: bool = False
    """Tuffy's ``@w``: a weight not to be learned."""
    per_constant: tuple[str, ...] = ()
    """Variables written ``+x``: the formula stands for one formula per constant of each."""

    @property
    def is_hard(self) -> bool:
        return self.weight is None


@dataclass
class MLNProgram:
    """Declarations, domains and formulas of one ``.mln`` file (see the module docstring)."""

    declarations: dict[str, Declaration] = field(default_factory=dict)
    domains: dict[str, list[str]] = field(default_factory=dict)
    formulas: list[Formula] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: str | None = None

    def variable_types(self, formula: Formula) -> dict[str, str]:
        """The type of each variable of `formula`, from the declarations of the predicates it is used in."""
        types: dict[str, str] = {}
        for atom in tree_atoms(formula.tree):
            decl = self.declarations.get(atom.predicate)
            if decl is None:
                raise ParseError(f"predicate {atom.predicate} is not declared", formula.line, 1,
                                 formula.text, self.source)
            if len(atom.args) != len(decl.types):
                raise ParseError(f"{atom.predicate} takes {len(decl.types)} argument(s), "
                                 f"{len(atom.args)} given", formula.line, 1, formula.text, self.source)
            for term, typ in zip(atom.args, decl.types):
                if isinstance(term, Variable):
                    if types.setdefault(term.name, typ) != typ:
                        raise ParseError(f"variable {term.name} is used as {types[term.name]} and as {typ}",
                                         formula.line, 1, formula.text, self.source)
        return types

    def type_constants(self, formulas: bool = True) -> dict[str, set[str]]:
        """Constants of each type written in the program: domain declarations and formula constants."""
        out: dict[str, set[str]] = {t: set(v) for t, v in self.domains.items()}
        for f in self.formulas if formulas else ():
            for atom in tree_atoms(f.tree):
                decl = self.declarations.get(atom.predicate)
                for term, typ in zip(atom.args, decl.types if decl else ()):
                    if isinstance(term, Constant):
                        out.setdefault(typ, set()).add(term.value)
        return out

    def rules(self, domains: Mapping[str, Sequence[str]] | None = None, derive: "Derive | None" = None) -> list[Rule]:
        """The program's clauses (see the module docstring); `domains` gives each type's constants
        (for ``EXIST`` and ``+x``); the program's own domain declarations are used otherwise."""
        dom = {t: sorted(v) for t, v in self.type_constants().items()}
        for t, v in (domains or {}).items():
            dom[t] = sorted(set(dom.get(t, ())) | {str(c) for c in v})
        out: list[Rule] = []
        for f in self.formulas:
            for g in self._per_constant(f, dom):
                out.extend(self._clauses(g, dom, derive))
        return out

    # ------------------------------------------------------------------ conversion
    def _per_constant(self, f: Formula, dom: Mapping[str, Sequence[str]]) -> list[Formula]:
        if not f.per_constant:
            return [f]
        types = self.variable_types(f)
        values = [dom.get(types.get(v, ""), []) for v in f.per_constant]
        if math.prod(len(v) for v in values) > MAX_EXPANSION:
            raise ParseError(f"+{f.per_constant[0]} expands to more than {MAX_EXPANSION} formulas",
                             f.line, 1, f.text, self.source)
        out = []
        for combo in itertools.product(*values):
            sub = {v: Constant(c) for v, c in zip(f.per_constant, combo)}
            tree = substitute(f.tree, sub)
            text = f.text
            for v, c in zip(f.per_constant, combo):
                text = re.sub(r"\+\??" + re.escape(v) + r"\b", c, text)
            out.append(replace(f, tree=tree, text=text, per_constant=()))
        return out

    def _clauses(self, f: Formula, dom: Mapping[str, Sequence[str]], derive: "Derive | None" = None) -> list[Rule]:
        types = self.variable_types(f)
        tree = expand_quantifiers(f.tree, types, dom, self, f, True, derive)
        clauses = to_cnf(to_nnf(tree, True), self, f)
        weight = f.weight
        if weight is not None and len(clauses) > 1:
            negated = to_cnf(to_nnf(tree, False), self, f)
            if len(negated) == 1:
                clauses, weight = negated, -weight
            else:
                weight = weight / len(clauses)
        rules = []
        for clause in clauses:
            lits = [l for l in clause if l[0] == "lit"]
            conds = tuple(condition_of(l) for l in clause if l[0] in ("eq", "neq"))
            if any(c is True for c in conds):  # a literal true in every grounding: the clause is constant
                continue
            conds = tuple(c for c in conds if c is not False)
            if not lits:
                continue
            seen: dict[Literal, None] = {}
            for l in lits:
                seen.setdefault(Literal(l[1], l[2]))
            rules.append(Rule(body=(), head=tuple(seen), weight=weight, dialect="mln", name=f.text,
                              conditions=conds))
        return rules

