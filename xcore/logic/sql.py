"""SQL generation for grounding: a rule's clause becomes one conjunctive query (pure text, no engine).

`plan_rule` decides, per clause literal, how its atom table enters the query (see
`xcore.logic.grounding` for the semantics); `rule_sql` renders the plan as standard SQL that
DuckDB, Postgres or Spark SQL can run. Atom tables are ``(atom_id, a0, .., ak)`` of integer
constant ids, domain tables ``(const_id)``; names come from `TableNames`. The query selects one
atom-id column ``l<j>`` per clause literal (``-1`` for a missing atom) and one constant-id
column ``v<k>`` per rule variable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable
from typing import Literal as TypingLiteral

from xcore.data.schema import Schema
from xcore.errors import SchemaError
from xcore.logic.ast import Comparison, Constant, Rule, Term, Variable
from xcore.logic.checks import check_rule, rule_variable_types

JoinKind = TypingLiteral["inner", "left"]

MAX_RULE_LITERALS = 128
"""Longest rule (body plus head literals) that is planned and grounded; longer rules raise
`SchemaError`. xcore's join planning is polynomial in the length (a 150-atom chain plans in
0.2 s), but the engine's own planning of one query joining that many tables is not: DuckDB
takes about 3 s to plan a 100-way join and 7 s for 150 ways; no model needs rules this long."""


@dataclass(frozen=True)
class TableNames:
    """How atom and domain tables are named in the database (format strings, one ``{}``)."""

    atoms: str = "atoms_{}"
    domain: str = "domain_{}"
    targets: str = "targets_{}"
    """Only the target (open) atoms of a predicate, same columns (for `focused_rule_sql`)."""

    def atom_table(self, predicate: str) -> str:
        return quote_identifier(self.atoms.format(predicate))

    def target_table(self, predicate: str) -> str:
        return quote_identifier(self.targets.format(predicate))

    def domain_table(self, type_name: str) -> str:
        return quote_identifier(self.domain.format(type_name))


@dataclass(frozen=True)
class Scan:
    """One table in the grounding query: a clause literal's atom table or a variable's domain."""

    alias: str
    source: TypingLiteral["atoms", "domain", "targets"]
    name: str
    """Predicate name (atoms) or type name (domain)."""
    literal: int
    """Clause-literal position for atom scans, -1 for domain scans."""
    join: JoinKind
    columns: tuple[tuple[str, Term], ...]
    """(column, term) pairs: a constant is an equality filter, a variable binds or joins."""


@dataclass(frozen=True)
class GroundingPlan:
    """The scans of one rule's grounding query, inner scans first (join order), then left scans."""

    rule: Rule
    scans: tuple[Scan, ...]
    variables: tuple[Variable, ...]
    signs: tuple[int, ...]
    """Per clause literal: +1 clause-positive, -1 clause-negative."""

    @property
    def inner_scans(self) -> tuple[Scan, ...]:
        return tuple(s for s in self.scans if s.join == "inner")

    def literal_scan(self, j: int) -> Scan:
        return next(s for s in self.scans if s.literal == j)


def quote_identifier(name: str) -> str:
    """A double-quoted SQL identifier (standard SQL; embedded quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def clause_signs(rule: Rule) -> tuple[int, ...]:
    """+1 for clause-positive literals (head atoms, negated body atoms), -1 for clause-negative."""
    return tuple(-1 if lit.negated else 1 for lit in rule.clause_literals())


def plan_rule(rule: Rule, schema: Schema, domain_variables: bool = False) -> GroundingPlan:
    """Decide the join of every clause literal (binding inner join, left join or domain scan)."""
    lits = rule.clause_literals()
    if len(lits) > MAX_RULE_LITERALS:
        raise SchemaError(f"rule `{_short(rule.text())}` has {len(lits)} literals, above the limit of "
                          f"{MAX_RULE_LITERALS} (xcore.logic.sql.MAX_RULE_LITERALS); split it into "
                          f"shorter rules")
    check_rule(rule, schema, check_types=domain_variables)
    signs = clause_signs(rule)
    binding = [j for j, s in enumerate(signs) if s < 0]
    bound: set[Variable] = {v for j in binding for v in lits[j].atom.variables}
    inner = list(binding)
    domain_vars: list[Variable] = []
    if domain_variables:
        types = rule_variable_types(rule, schema)
        domain_vars = [v for v in rule.variables if v not in bound]
    else:
        inner += [j for j, s in enumerate(signs) if s > 0 and not set(lits[j].atom.variables) <= bound]
    left = [j for j in range(len(lits)) if j not in inner]

    def atom_scan(j: int, join: JoinKind) -> Scan:
        a = lits[j].atom
        cols = tuple((f"a{i}", t) for i, t in enumerate(a.args))
        return Scan(f"t{j}", "atoms", a.predicate, j, join, cols)

    scans: list[Scan] = [atom_scan(j, "inner") for j in _connected_order(inner, lits)]
    for k, v in enumerate(domain_vars):
        scans.append(Scan(f"d{k}", "domain", types[v], -1, "inner", (("const_id", v),)))
    scans += [atom_scan(j, "left") for j in left]
    return GroundingPlan(rule, tuple(scans), rule.variables, signs)


_SQL_OPERATORS = {"!=": "<>", "==": "=", "%": "<"}


def _comparison_sql(comp: Comparison, binding: dict[Variable, str], constant_id: Callable[[str], int],
                    rule: Rule) -> str:
    """A term comparison as a filter on constant ids. Constant ids follow the constants' sorted
    text, so ``%`` (PSL's non-symmetric comparison) keeps the groundings whose first term sorts
    first."""
    def side(t: Term) -> str:
        if isinstance(t, Constant):
            return str(int(constant_id(t.value)))
        if t not in binding:
            raise SchemaError(f"variable {t} of {comp.text()} is bound by no atom of `{_short(rule.text())}`")
        return binding[t]
    return f"{side(comp.left)} {_SQL_OPERATORS[comp.op]} {side(comp.right)}"


def _short(text: str, n: int = 80) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."


def _connected_order(order: list[int], lits) -> list[int]:
    """Keep clause order but prefer, at each step, a literal sharing a variable with the ones so far
    (so joins have keys and cross joins come last)."""
    rest, out, seen = list(order), [], set()
    while rest:
        pick = next((j for j in rest if seen & set(lits[j].atom.variables)), rest[0])
        rest.remove(pick)
        out.append(pick)
        seen |= set(lits[pick].atom.variables)
    return out


def rule_sql(
    rule: Rule | GroundingPlan,
    schema: Schema,
    constant_id: Callable[[str], int],
    names: TableNames = TableNames(),
    domain_variables: bool = False,
    limit: int | None = None,
) -> str:
    """Standard-SQL text grounding one rule: columns ``l0..`` (atom ids, -1 = missing) and ``v0..``.

    `constant_id` maps a constant string of the rule to its integer id (-1 if unknown: no atom
    matches). `limit` appends ``LIMIT n`` (used as a hard cap on result size).
    """
    plan = rule if isinstance(rule, GroundingPlan) else plan_rule(rule, schema, domain_variables)
    binding: dict[Variable, str] = {}
    from_parts: list[str] = []
    where: list[str] = []
    for n, scan in enumerate(plan.scans):
        table = (names.atom_table(scan.name) if scan.source == "atoms" else names.target_table(scan.name)
                 if scan.source == "targets" else names.domain_table(scan.name))
        conds: list[str] = []
        for col, term in scan.columns:
            ref = f"{scan.alias}.{col}"
            if isinstance(term, Constant):
                conds.append(f"{ref} = {int(constant_id(term.value))}")
            elif term in binding:
                conds.append(f"{ref} = {binding[term]}")
            elif scan.join == "inner":
                binding[term] = ref
            else:  # a left scan only sees bound variables (plan invariant)
                raise SchemaError(f"internal: unbound variable {term} in left join of `{plan.rule.text()}`")
        if n == 0 and scan.join == "inner":
            from_parts.append(f"FROM {table} AS {scan.alias}")
            where += conds
        elif n == 0:
            from_parts.append("FROM (SELECT 1 AS one) AS unit")
            from_parts.append(f"LEFT JOIN {table} AS {scan.alias} ON {' AND '.join(conds) or 'TRUE'}")
        elif scan.join == "inner":
            if conds:
                from_parts.append(f"JOIN {table} AS {scan.alias} ON {' AND '.join(conds)}")
            else:
                from_parts.append(f"CROSS JOIN {table} AS {scan.alias}")
        else:
            from_parts.append(f"LEFT JOIN {table} AS {scan.alias} ON {' AND '.join(conds) or 'TRUE'}")
    for comp in plan.rule.conditions:
        where.append(_comparison_sql(comp, binding, constant_id, plan.rule))
    select: list[str] = []
    for j in range(len(plan.signs)):
        scan = plan.literal_scan(j)
        ref = f"{scan.alias}.atom_id"
        select.append(f"{ref} AS l{j}" if scan.join == "inner" else f"COALESCE({ref}, -1) AS l{j}")
    for k, v in enumerate(plan.variables):
        select.append(f"{binding[v]} AS v{k}")
    sql = "SELECT " + ", ".join(select) + "\n" + "\n".join(from_parts)
    if where:
        sql += "\nWHERE " + " AND ".join(where)
    if limit is not None:
        sql += f"\nLIMIT {int(limit)}"
    return sql


def focused_rule_sql(
    plan: GroundingPlan,
    schema: Schema,
    constant_id: Callable[[str], int],
    first_target: dict[str, int],
    names: TableNames = TableNames(),
) -> str | None:
    """SQL for only the ground rules of `plan` with at least one target atom (None: the rule has none).

    `first_target[p]` is the first target atom id of predicate p (its targets are ids from there up
    to the end of p's block). One sub-query per clause literal j over a predicate with targets: that
    literal scans the target table first (an inner join from a small table) and literals before j
    of such predicates must not be targets, so the UNION ALL lists each ground rule once. The rows are
    exactly the rows of `rule_sql` that contain a target (in another order).
    """
    lits = plan.rule.clause_literals()
    focus = [j for j, lit in enumerate(lits) if lit.atom.predicate in first_target]
    if not focus:
        return None
    parts = []
    for n, j in enumerate(focus):
        scan = plan.literal_scan(j)
        first = Scan(scan.alias, "targets", scan.name, j, "inner", scan.columns)
        inner = [s for s in plan.inner_scans if s.literal != j]
        left = [s for s in plan.scans if s.join == "left" and s.literal != j]
        ordered = _connected_from(first, inner)
        sub = rule_sql(GroundingPlan(plan.rule, (first, *ordered, *left), plan.variables, plan.signs),
                       schema, constant_id, names)
        earlier = [f"l{k} < {int(first_target[lits[k].atom.predicate])}" for k in focus[:n]]
        parts.append(f"SELECT * FROM ({sub}) AS q{n}" + (f" WHERE {' AND '.join(earlier)}" if earlier else ""))
    return "\nUNION ALL\n".join(parts)


def _connected_from(first: Scan, inner: list[Scan]) -> list[Scan]:
    """`inner` in its order, but each next scan shares a variable with those before when one can."""
    def variables(s: Scan) -> set:
        return {t for _, t in s.columns if isinstance(t, Variable)}

    seen, rest, out = variables(first), list(inner), []
    while rest:
        pick = next((s for s in rest if seen & variables(s)), rest[0])
        rest.remove(pick)
        out.append(pick)
        seen |= variables(pick)
    return out
