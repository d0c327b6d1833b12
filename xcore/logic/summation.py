"""Grounding PSL arithmetic rules with summation atoms (``HasCat(A, +C) = 1 .``) set-wise in DuckDB.

Semantics, as Java PSL 2.4 grounds them (`AbstractArithmeticRule`):

* The groundings are the distinct assignments of the rule's ordinary variables under which all
  atoms join (summation variables joined like any variable, then projected away).
* A summation variable ``+C`` ranges over the distinct constants at its position among its
  predicate's atoms (constant arguments of the atom filter them). For one grounding, the atom's
  expansions are: for an open predicate, the atoms that exist; for a closed predicate, every
  candidate (a missing atom is 0).
* A filter clause ``{C: F}`` keeps an expansion when F holds with C bound to its value (an atom
  holds when observed above 0; F may use only closed predicates). A disjunctive filter splits the
  rule into one rule per disjunct, as PSL does.
* ``|C|`` is the number of kept expansions of C's atom in that grounding; coefficients and the
  constant are evaluated per grounding from these counts. A grounding whose atoms were all filtered
  out gives no ground rule.

Everything is one SQL query per summation atom and split (the expansions) plus a GROUP BY for the
counts; coefficients and the sparse linear form are numpy operations over all ground rules at once.
"""

from __future__ import annotations

import itertools
import uuid
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from xcore.errors import SchemaError
from xcore.logic.ast import ArithmeticRule, Atom, CoefExpr, Comparison, Constant, Literal, Rule, SumVariable, Variable
from xcore.logic.atoms import AtomStore
from xcore.logic.sql import GroundingPlan, TableNames, quote_identifier, rule_sql


def query_rule(rule: ArithmeticRule) -> Rule:
    """The conjunction of the rule's atoms with every ``+C`` read as a variable: its groundings are
    PSL's grounding query (before projecting the summation variables away)."""
    def plain(a: Atom) -> Atom:
        return Atom(a.predicate, tuple(Variable("+" + t.name) if isinstance(t, SumVariable) else t for t in a.args))
    return Rule(body=tuple(Literal(plain(a)) for _, a in rule.terms), head=(), weight=None)


@dataclass
class SummationGround:
    """Ground rules of a summation rule as a flat list of (ground rule, atom, coefficient) entries."""

    bindings: np.ndarray
    """(n, V) constant ids of the rule's ordinary variables."""
    row: np.ndarray
    atom: np.ndarray
    """Atom id per entry (-1: a missing atom of a closed predicate, value 0)."""
    coef: np.ndarray
    term: np.ndarray
    """Which term of the rule each entry expands."""
    constant: np.ndarray
    """(n,) the constant of ``sum coef * atom + constant  rel  0`` per ground rule."""


def ground_summation(con, store: AtomStore, rule: ArithmeticRule, plan: GroundingPlan,
                     names: TableNames = TableNames()) -> SummationGround:
    """Every ground rule of one summation rule (`plan` is the plan of `query_rule(rule)`)."""
    schema = store.schema
    for f in rule.filters:
        for conj in f.dnf:
            for x in conj:
                if isinstance(x, Literal):
                    p = schema.predicates.get(x.atom.predicate)
                    if p is None:
                        raise SchemaError(f"unknown predicate {x.atom.predicate!r} in the filter of `{rule.text()}`")
                    if not p.closed:
                        raise SchemaError(f"open predicate {p.name} is not allowed in the filter of `{rule.text()}`; "
                                          "only closed predicates may appear in filters (as in PSL)")
                    if len(x.atom.args) != p.arity:
                        raise SchemaError(f"{p.name} takes {p.arity} arguments, in the filter of `{rule.text()}`")
    tag = uuid.uuid4().hex[:10]
    g_table = f"sum_g_{tag}"
    var_cols = {v: f"v{k}" for k, v in enumerate(plan.variables)}
    plain_vars = [v for v in plan.variables if not v.name.startswith("+")]
    sum_terms = [j for j, (_, a) in enumerate(rule.terms) if a.sum_variables]
    fixed_terms = [j for j in range(len(rule.terms)) if j not in sum_terms]
    q = rule_sql(plan, schema, store.constant_id, names)
    keys = [var_cols[v] for v in plain_vars] + [f"l{j}" for j in fixed_terms]
    registered: list[str] = []
    try:
        if plain_vars:
            order = ", ".join(var_cols[v] for v in plain_vars)
            con.execute(f"CREATE TEMP TABLE {g_table} AS SELECT (row_number() OVER (ORDER BY {order}) - 1) AS gid, * "
                        f"FROM (SELECT DISTINCT {', '.join(keys)} FROM ({q}) AS q) AS d")
        else:
            sel = ", ".join(["0 AS gid"] + keys)
            con.execute(f"CREATE TEMP TABLE {g_table} AS SELECT {sel} FROM ({q}) AS q LIMIT 1")
        g = con.sql(f"SELECT * FROM {g_table} ORDER BY gid").to_arrow_table()
        n = g.num_rows
        bindings = np.column_stack([_col(g, var_cols[v], np.int32) for v in plain_vars]) if plain_vars \
            else np.zeros((n, 0), dtype=np.int32)
        fixed_ids = {j: _col(g, f"l{j}", np.int64) for j in fixed_terms}
        vals = _register_filter_tables(con, store, rule, tag, registered)
        splits = list(itertools.product(*(f.dnf for f in rule.filters))) or [()]
        out = []
        for split in splits:
            conds = {f.variable: conj for f, conj in zip(rule.filters, split)}
            out.append(_ground_split(con, store, rule, g_table, n, sum_terms, fixed_ids, conds, vals, var_cols, names))
        rows = [o[0] for o in out]
        offs = np.cumsum([0] + [len(o[5]) for o in out])
        return SummationGround(
            bindings=np.concatenate([bindings[o[4]] for o in out]) if out else bindings[:0],
            row=np.concatenate([r + offs[k] for k, r in enumerate(rows)]),
            atom=np.concatenate([o[1] for o in out]), coef=np.concatenate([o[2] for o in out]),
            term=np.concatenate([o[3] for o in out]), constant=np.concatenate([o[5] for o in out]))
    finally:
        con.execute(f"DROP TABLE IF EXISTS {g_table}")
        for name in registered:
            con.unregister(name)


def _col(table: pa.Table, name: str, dtype) -> np.ndarray:
    return table.column(name).to_numpy().astype(dtype, copy=False)


def _register_filter_tables(con, store: AtomStore, rule: ArithmeticRule, tag: str, registered: list[str]) -> dict[str, str]:
    """Register (a0.., value) of every predicate a filter uses; returns predicate -> table name."""
    out: dict[str, str] = {}
    preds = {x.atom.predicate for f in rule.filters for conj in f.dnf for x in conj if isinstance(x, Literal)}
    for name in sorted(preds):
        pa_ = store.predicates[name]
        cols = {f"a{i}": pa.array(np.ascontiguousarray(pa_.args[:, i])) for i in range(pa_.predicate.arity)}
        cols["value"] = pa.array(store.value[pa_.offset:pa_.offset + pa_.n])
        table = f"sum_f_{tag}_{len(out)}"
        con.register(table, pa.table(cols))
        registered.append(table)
        out[name] = table
    return out


def _ground_split(con, store, rule: ArithmeticRule, g_table: str, n: int, sum_terms: list[int],
                  fixed_ids: dict[int, np.ndarray], conds: dict, vals: dict, var_cols: dict, names: TableNames):
    """The ground rules of one filter split: (row, atom, coef, term, kept groundings, constant)."""
    parts = [_term_sql(store, rule, j, g_table, conds, vals, var_cols, names) for j in sum_terms]
    flat_sql = "\nUNION ALL\n".join(parts)
    flat = con.sql(f"SELECT * FROM ({flat_sql}) AS f ORDER BY gid, term, atom").to_arrow_table()
    counted = con.sql(f"SELECT gid, term, count(*) AS k FROM ({flat_sql}) AS f GROUP BY gid, term").to_arrow_table()
    counts = np.zeros((n, len(rule.terms)), dtype=np.float64)
    counts[_col(counted, "gid", np.int64), _col(counted, "term", np.int64)] = _col(counted, "k", np.float64)
    cards = {v.name: counts[:, j] for j in sum_terms for v in rule.terms[j][1].sum_variables}
    keep = np.ones(n, dtype=bool) if fixed_ids else counts.sum(axis=1) > 0
    coef = [_evaluate(c, cards, n) for c, _ in rule.terms]
    constant = _evaluate(rule.constant, cards, n)
    f_row, f_term, f_atom = (_col(flat, "gid", np.int64), _col(flat, "term", np.int64), _col(flat, "atom", np.int64))
    coef_mat = np.column_stack(coef) if coef else np.zeros((n, 0))
    rows = [f_row]
    atoms = [f_atom]
    terms = [f_term]
    for j, ids in fixed_ids.items():
        rows.append(np.arange(n, dtype=np.int64))
        atoms.append(ids)
        terms.append(np.full(n, j, dtype=np.int64))
    row, atom, term = np.concatenate(rows), np.concatenate(atoms), np.concatenate(terms)
    cvals = coef_mat[row, term]
    kept = np.flatnonzero(keep)
    new_index = np.full(n, -1, dtype=np.int64)
    new_index[kept] = np.arange(len(kept))
    m = keep[row]
    order = np.lexsort((term[m], new_index[row[m]]))
    return (new_index[row[m]][order], atom[m][order], cvals[m][order], term[m][order], kept, constant[kept])



def _term_sql(store, rule: ArithmeticRule, j: int, g_table: str, conds: dict, vals: dict, var_cols: dict,
              names: TableNames) -> str:
    """SQL of summation term `j`'s atoms per grounding (gid, term, atom; -1 for a closed atom not in the
    data), the summation variables filtered by the rule's conditions."""
    atom = rule.terms[j][1]
    pred = store.schema.predicates[atom.predicate]
    table = names.atom_table(atom.predicate)
    sum_ref: dict[str, str] = {}
    on: list[str] = []
    joins: list[str] = []
    const_filters: list[str] = []
    for i, t in enumerate(atom.args):
        if isinstance(t, Constant):
            const_filters.append(f"a{i} = {int(store.constant_id(t.value))}")
    for i, t in enumerate(atom.args):
        if isinstance(t, Variable):
            on.append(f"t.a{i} = g.{var_cols[t]}")
        elif isinstance(t, Constant):
            on.append(f"t.a{i} = {int(store.constant_id(t.value))}")
        elif pred.closed:
            alias = f"c{i}"
            where = f" WHERE {' AND '.join(const_filters)}" if const_filters else ""
            joins.append(f"CROSS JOIN (SELECT DISTINCT a{i} AS c FROM {table}{where}) AS {alias}")
            on.append(f"t.a{i} = {alias}.c")
            sum_ref[t.name] = f"{alias}.c"
        else:
            sum_ref[t.name] = f"t.a{i}"
    where: list[str] = []
    for name, ref in sum_ref.items():
        for x in conds.get(name, ()):
            where.append(_filter_sql(x, name, ref, var_cols, vals, store, rule))
    if pred.closed:
        sql = (f"SELECT g.gid, {j} AS term, COALESCE(t.atom_id, -1) AS atom FROM {g_table} AS g "
               + " ".join(joins) + f" LEFT JOIN {table} AS t ON {' AND '.join(on)}")
    else:
        sql = f"SELECT g.gid, {j} AS term, t.atom_id AS atom FROM {g_table} AS g JOIN {table} AS t ON {' AND '.join(on)}"
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql


def _evaluate(c, cards: dict, n: int) -> np.ndarray:
    """A coefficient's value for every grounding."""
    if isinstance(c, CoefExpr):
        return np.broadcast_to(np.asarray(c.evaluate(cards), dtype=np.float64), (n,)).copy()
    return np.full(n, float(c))


_OPS = {"!=": "<>", "==": "=", "%": "<"}


def _filter_sql(x, sum_name: str, sum_ref: str, var_cols: dict, vals: dict, store: AtomStore, rule) -> str:
    """One filter literal or comparison as a SQL condition on an expansion row."""
    def ref(t) -> str:
        if isinstance(t, Constant):
            return str(int(store.constant_id(t.value)))
        if t.name == sum_name:
            return sum_ref
        if t not in var_cols:
            raise SchemaError(f"variable {t.name} of the filter on {sum_name} is bound by no atom of `{rule.text()}`")
        return f"g.{var_cols[t]}"

    if isinstance(x, Comparison):
        return f"{ref(x.left)} {_OPS[x.op]} {ref(x.right)}"
    table = quote_identifier(vals[x.atom.predicate])
    match = " AND ".join([f"fv.a{i} = {ref(t)}" for i, t in enumerate(x.atom.args)] + ["fv.value > 0"])
    exists = f"EXISTS (SELECT 1 FROM {table} AS fv WHERE {match})"
    return f"NOT {exists}" if x.negated else exists
