"""`NetworkIndex`: per-clause and per-query-atom arrays of a folded network that coalitions need
(variable bindings, embedded-type variables, literal positions, query-atom arguments) and its lookups."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd

from xcore.errors import XcoreError
from xcore.logic.ast import Variable
from xcore.mln.embeddings import check_domain_type
from xcore.mln.network import GroundMLN


@dataclass
class NetworkIndex:
    """Per-clause and per-query-atom arrays of a folded network that coalitions need: variable
    bindings, which variables are of the embedded type, each literal's position in its rule and
    each clause's shape, query-atom arguments, and vectorised lookups."""

    mln: GroundMLN
    domain_type: str
    objects: np.ndarray
    """Sorted constant ids of the embedded domain's objects."""
    bindings: np.ndarray
    """(n_clauses, Vmax) int64 constant id per rule variable, -1 past the rule's variables."""
    var_domain: np.ndarray
    """(n_clauses, Vmax) bool: the variable has the embedded type."""
    entry_position: np.ndarray
    """(nnz,) int64 position of each literal (CSR order) in its rule's clause literals."""
    shape: np.ndarray
    """(n_clauses,) int64 bit mask of the literal positions holding query atoms."""
    atom_args: np.ndarray
    """(n_atoms, A) int64 constant ids of each query atom's arguments (-1 past its arity)."""
    atom_domain: np.ndarray
    """(n_atoms, A) bool: the argument position has the embedded type."""
    atom_pred: np.ndarray
    """(n_atoms,) int32 predicate index of each query atom."""

    @property
    def n_constants(self) -> int:
        return int(self.mln.store.n_constants)

    def members(self, sampled: np.ndarray) -> np.ndarray:
        """(n_atoms,) bool: query atoms whose embedded-domain arguments are all sampled;
        `sampled` is a bool array over constant ids."""
        ext = np.append(np.asarray(sampled, dtype=bool), False)
        ok = ~self.atom_domain | ext[self.atom_args]
        return ok.all(axis=1)

    @cached_property
    def _clause_keys(self) -> pd.MultiIndex:
        return pd.MultiIndex.from_arrays([self.mln.rule.astype(np.int64)] + list(self.bindings.T))

    def clause_lookup(self, rule: np.ndarray, bindings: np.ndarray) -> np.ndarray:
        """Clause index of each (rule, bindings) row in the folded network, -1 where none (the
        grounding does not exist or was folded away). Vectorised hash lookup."""
        rule = np.asarray(rule, dtype=np.int64)
        if not len(rule):
            return np.zeros(0, dtype=np.int64)
        query = pd.MultiIndex.from_arrays([rule] + list(np.asarray(bindings, dtype=np.int64).T))
        return self._clause_keys.get_indexer(query).astype(np.int64)

    def entry_lookup(self, clause: np.ndarray, atom: np.ndarray) -> np.ndarray:
        """CSR entry index of each (clause, query atom) literal, -1 where the atom is not in it."""
        return entry_lookup(self.mln, clause, atom)


def entry_lookup(mln: GroundMLN, clause: np.ndarray, atom: np.ndarray) -> np.ndarray:
    """CSR entry index of each (clause, query atom) literal of `mln`, -1 where the atom is not in
    the clause (binary search on the CSR order, which sorts by clause then atom)."""
    clause, atom = np.asarray(clause, dtype=np.int64), np.asarray(atom, dtype=np.int64)
    keys = mln.entry_clause * mln.n_atoms + mln.entry_atom
    out = np.full(len(clause), -1, dtype=np.int64)
    if not len(keys) or not len(clause):
        return out
    q = clause * mln.n_atoms + atom
    pos = np.minimum(np.searchsorted(keys, q), len(keys) - 1)
    hit = (keys[pos] == q) & (clause >= 0) & (atom >= 0)
    out[hit] = pos[hit]
    return out


def _variable_types(rule, schema) -> list[str]:
    """Argument type of each rule variable (from its first occurrence)."""
    types: dict[Variable, str] = {}
    for lit in rule.literals:
        pred = schema[lit.atom.predicate]
        for i, a in enumerate(lit.atom.args):
            if isinstance(a, Variable) and a not in types:
                types[a] = pred.types[i]
    return [types[v] for v in rule.variables]


def build_index(mln: GroundMLN, domain_type: str) -> NetworkIndex:
    """`NetworkIndex` of a folded network grounded from a dataset (one pass per rule)."""
    store, program = mln.store, mln.program
    if store is None or program is None:
        raise XcoreError("coalitions need a network grounded from a dataset (with its atom store and program)")
    objects = check_domain_type(store, domain_type)
    schema = store.schema
    n_c = mln.n_clauses
    vmax = max((len(g.rule.variables) for g in program), default=0)
    bindings = np.full((n_c, vmax), -1, dtype=np.int64)
    var_domain = np.zeros((n_c, vmax), dtype=bool)
    entry_position = np.zeros(mln.nnz, dtype=np.int64)
    ec, ea = mln.entry_clause, mln.entry_atom
    clause_order = np.argsort(mln.rule, kind="stable")
    rules_present, clause_start = np.unique(mln.rule[clause_order], return_index=True)
    clause_bounds = np.append(clause_start, n_c)
    entry_rule = mln.rule[ec]
    entry_order = np.argsort(entry_rule, kind="stable")
    entry_bounds = np.searchsorted(entry_rule[entry_order], np.append(rules_present, np.iinfo(np.int64).max))
    for k, r in enumerate(rules_present.tolist()):  # one pass per rule
        g = program[r]
        sel = clause_order[clause_bounds[k]:clause_bounds[k + 1]]
        v = len(g.rule.variables)
        if v:
            bindings[sel, :v] = np.asarray(g.bindings, dtype=np.int64)[mln.ground_row[sel]]
            var_domain[sel, :v] = np.array(_variable_types(g.rule, schema)) == domain_type
        ents = entry_order[entry_bounds[k]:entry_bounds[k + 1]]
        ids = np.asarray(g.atom_ids)[mln.ground_row[ec[ents]]]
        entry_position[ents] = np.argmax(ids == store.target_ids[ea[ents]][:, None], axis=1)
    shape = np.zeros(n_c, dtype=np.int64)
    np.add.at(shape, ec, np.left_shift(np.int64(1), entry_position))  # positions are distinct per clause
    tid = store.target_ids
    atom_pred = store.pred[tid]
    atom_args = store.args[tid].astype(np.int64)
    preds = list(store.predicates.values())
    width = atom_args.shape[1]
    pred_domain = np.zeros((len(preds), width), dtype=bool)
    for p in preds:
        pred_domain[p.index, :p.predicate.arity] = np.array(p.predicate.types) == domain_type
    atom_domain = pred_domain[atom_pred] if len(preds) else np.zeros((len(tid), width), bool)
    if mln.n_atoms == 0:
        raise XcoreError("the network has no query atoms to explain")
    if not atom_domain.any():
        qp = sorted({preds[i].predicate.name for i in np.unique(atom_pred)})
        raise XcoreError(f"no query atom has an argument of type {domain_type!r} (query predicates: "
                         f"{', '.join(qp)}); embed the type of the objects the queries are about")
    return NetworkIndex(mln, domain_type, objects, bindings, var_domain, entry_position, shape,
                        atom_args, atom_domain, atom_pred)


