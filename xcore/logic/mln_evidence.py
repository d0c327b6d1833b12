"""Evidence files (``.db``) of Markov logic programs: ground atoms, their truth and domains."""

from __future__ import annotations

from dataclasses import dataclass

from xcore.logic.ast import Variable
from xcore.logic.mln_program import MLNProgram
from xcore.logic.mln_syntax import Parser, parse_domain
from xcore.logic.mln_tokens import strip_comments, tokenize_line


@dataclass(frozen=True)
class EvidenceAtom:
    """One line of a ``.db`` file: a ground atom, its truth (1, 0 or a soft probability) and line."""

    predicate: str
    args: tuple[str, ...]
    value: float
    line: int
    soft: bool = False


def parse_db(text: str, source: str | None = None) -> tuple[list[EvidenceAtom], dict[str, list[str]]]:
    """Atoms of an evidence file (``Smokes(A)``, ``!Smokes(A)``, Tuffy's ``0.8 Smokes(A)``) and any
    domain declarations (``person = {A, B}``) in it. Bad lines raise `ParseError`."""
    clean = strip_comments(text.replace("\r\n", "\n").replace("\r", "\n"), source)
    raw_lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    atoms: list[EvidenceAtom] = []
    domains: dict[str, list[str]] = {}
    for n, line in enumerate(clean.split("\n"), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        toks = tokenize_line(line, n, source)
        p = Parser(toks, "\n".join(raw_lines), source, prac=True)
        dom = MLNProgram(source=source)
        if parse_domain(p, dom):
            for k, v in dom.domains.items():
                domains.setdefault(k, []).extend(v)
            continue
        p.pos = 0
        value, soft = 1.0, False
        if p.at("number"):
            value, soft = float(p.tok.text), True  # type: ignore[union-attr]
            if not 0.0 <= value <= 1.0:
                raise p.fail("soft evidence must be a probability in [0, 1]", toks[0])
            p.pos += 1
        if p.at("!", "~"):
            if soft:
                raise p.fail("soft evidence takes a positive atom", p.tok)
            value = 0.0
            p.pos += 1
        t = p.tok
        if t is None or t.kind != "ident" or p.pos + 1 >= len(toks) or toks[p.pos + 1].kind != "(":
            raise p.fail("expected a ground atom such as Smokes(Anna), !Smokes(Anna) or 0.8 Smokes(Anna)")
        lit = p.atom()
        if p.tok is not None and p.at("."):
            p.pos += 1
        if p.tok is not None:
            raise p.fail(f"unexpected {p.tok.text!r} after the atom")
        args = []
        for term in lit[1].args:
            if isinstance(term, Variable):
                raise p.fail("evidence atoms are ground: no ?variables or +variables", t)
            args.append(term.value)
        atoms.append(EvidenceAtom(lit[1].predicate, tuple(args), value, n, soft and value not in (0.0, 1.0)))
    return atoms, domains
