"""The student edition's answers: sealed, so that reading them gives nothing away.

``python -m depthnotes.tools.student`` writes ``sealed.json`` into the student edition of the
package from the instructor's ``depthnotes.course.answers`` (which that edition does not
ship). For each exercise it holds what the check compares against, as salted slow hashes
(``depthnotes.course.kinds.digest``) of the compared forms:

- a number: its forms at the precision the exercise asks for, each known mistake's forms, and
  the answer's forms at fewer digits (for "give more digits");
- a choice: the right option and each known mistake's option;
- a function: hidden cases, each with its arguments in the clear (they are questions, not
  answers) and its expected output hashed; each known mistake's output on every case, hashed.

The hints are stored as text (they never state an answer: ``tests/test_exercises.py``). A
determined student can still try candidates one by one against the hashes, a few ms each: the
table keeps answers out of reach of reading, not of search.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from depthnotes.course.kinds import (ROUNDS, Choice, Function, GivenCase, Mistake, Number,
                                     Table, digest)

#: Where the student edition keeps its table (package data next to this module).
PATH = Path(__file__).with_name("sealed.json")


# ---------------------------------------------------------------- arguments of hidden cases

def encode(value: Any) -> Any:
    """A case's argument as JSON, tagged where JSON has no type of its own."""
    import numpy as np

    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, tuple):
        return {"$tuple": [encode(v) for v in value]}
    if isinstance(value, dict):
        return {"$dict": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, SimpleNamespace):
        return {"$ns": {k: encode(v) for k, v in vars(value).items()}}
    if type(value).__name__ == "Tensor":
        return {"$tensor": value.tolist(), "dtype": str(value.dtype).split(".")[-1]}
    if isinstance(value, np.ndarray):
        return {"$array": value.tolist()}
    if isinstance(value, np.generic):
        return value.item()
    if type(value).__name__ == "LinearFit":
        return {"$LinearFit": {k: encode(v) for k, v in vars(value).items()}}
    raise TypeError(f"cannot seal a case argument of type {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$tuple" in value:
        return tuple(decode(v) for v in value["$tuple"])
    if "$dict" in value:
        return {decode(k): decode(v) for k, v in value["$dict"]}
    if "$ns" in value:
        return SimpleNamespace(**{k: decode(v) for k, v in value["$ns"].items()})
    if "$tensor" in value:
        import torch

        return torch.tensor(value["$tensor"], dtype=getattr(torch, value["dtype"]))
    if "$array" in value:
        import numpy as np

        return np.array(value["$array"])
    if "$LinearFit" in value:
        from depthnotes.core.fitting import LinearFit

        return LinearFit(**{k: decode(v) for k, v in value["$LinearFit"].items()})
    raise ValueError(f"unknown sealed value {sorted(value)}")


def _hash_forms(salt: str, forms, rounds: int) -> list[str]:
    return sorted(digest(salt, f, rounds) for f in forms)


def _hashes(forms) -> frozenset:
    return frozenset(forms)


# ---------------------------------------------------------------- sealing and unsealing

def seal(spec, salt: str | None = None, rounds: int = ROUNDS) -> dict:
    """One exercise's spec as sealed JSON (a :class:`~depthnotes.course.kinds.Number`,
    :class:`~depthnotes.course.kinds.Choice` or :class:`~depthnotes.course.kinds.Function`), hashed with ``rounds`` PBKDF2 rounds (the tests use fewer)."""
    salt = salt or secrets.token_hex(8)
    table = spec.table()
    common = {"idea": spec.idea, "needs": list(spec.needs), "salt": salt, "rounds": rounds,
              "hints": [m.hint for m in spec.mistakes]}

    def _hash(salt, forms):
        return _hash_forms(salt, forms, rounds)
    if isinstance(spec, Number):
        return {**common, "kind": "number", "digits": spec.digits, "integer": spec.integer,
                "accept": _hash(salt, table.accept),
                "near": {str(k): _hash(salt, v) for k, v in table.near.items()},
                "mistakes": [_hash(salt, f) for f in table.mistakes]}
    if isinstance(spec, Choice):
        return {**common, "kind": "choice", "options": list(spec.options),
                "accept": _hash(salt, table.accept),
                "mistakes": [_hash(salt, f) for f in table.mistakes]}
    if isinstance(spec, Function):
        return {**common, "kind": "function", "digits": spec.digits, "integer": spec.integer,
                "forbids": list(spec.forbids),
                "cases": [{"args": encode(list(args)), "expected": _hash(salt, forms)}
                          for args, forms in table.cases],
                "given_cases": [{"args": list(c.args), "expected": c.expected}
                                for c in spec.given_cases],
                "mistakes": [[_hash(salt, f) for f in per_case] for per_case in table.mistakes]}
    raise TypeError(f"cannot seal a {type(spec).__name__} (only numbers, choices, functions)")


def unseal(entry: dict):
    """The spec a sealed entry stands for: the same kind, its answers replaced by hashes."""
    salt, rounds = entry["salt"], entry["rounds"]
    mistakes = tuple(Mistake(None, h) for h in entry["hints"])
    common = {"idea": entry["idea"], "needs": tuple(entry["needs"]), "mistakes": mistakes}
    kind = entry["kind"]
    if kind == "number":
        table = Table(salt, _hashes(entry["accept"]),
                      {int(k): _hashes(v) for k, v in entry["near"].items()},
                      tuple(_hashes(f) for f in entry["mistakes"]), rounds=rounds)
        return Number(**common, digits=entry["digits"], integer=entry["integer"],
                      sealed=table)
    if kind == "choice":
        table = Table(salt, _hashes(entry["accept"]),
                      mistakes=tuple(_hashes(f) for f in entry["mistakes"]), rounds=rounds)
        return Choice(**common, options=tuple(entry["options"]), sealed=table)
    if kind == "function":
        cases = tuple((tuple(decode(c["args"])), _hashes(c["expected"]))
                      for c in entry["cases"])
        table = Table(salt, cases=cases,
                      mistakes=tuple(tuple(_hashes(f) for f in per_case)
                                     for per_case in entry["mistakes"]), rounds=rounds)
        given = tuple(GivenCase(tuple(c["args"]), c["expected"])
                      for c in entry["given_cases"])
        return Function(**common, digits=entry["digits"], integer=entry["integer"],
                        given_cases=given, forbids=tuple(entry.get("forbids", ())),
                        sealed=table)
    raise ValueError(f"unknown sealed kind {kind!r}")


def seal_all(answers: dict, rounds: int = ROUNDS) -> dict:
    """The whole table, ready for ``json.dump``."""
    return {"format": 1, "exercises": {k: seal(v, rounds=rounds) for k, v in answers.items()}}


def load(path: Path = PATH) -> dict:
    """The sealed specs by exercise id, or {} if this edition has no table."""
    if not path.exists():
        return {}
    table = json.loads(path.read_text())
    return {k: unseal(v) for k, v in table["exercises"].items()}
