"""Records for tests that need one without training it: ``FakeRecord``, a stand-in with the
parts chapter 3's k-hop analyses read, and ``stored_record``, a real ``records.Record`` built
from runs written by hand (``loss_run``, ``diverged_run``), read through the real accessors
(``run``, ``curve``, ``final``)."""

from depthnotes.experiments.records import (PROVENANCE_KEYS, SCHEMA_VERSION, Record,
                                            round_floats)

#: Training steps of a ``loss_run`` (and the recipe's steps in ``stored_record``).
STEPS = 300
#: The vocabulary of a ``stored_record``'s models: a diverged run counts as ln V (about 4.17)
#: in the evidence library's comparisons (``ch4_trainability.loss_ceiling``).
VOCAB = 65


def loss_run(final, slope=0.0, steps=STEPS, eval_every=50, **extra):
    """A run that did not diverge: its training loss (every step) and validation loss (every
    ``eval_every`` steps) lie on the line through ``final`` at the last step with ``slope``
    nats per 100 steps, so ``trainability.late_slope`` reads ``slope`` back. ``extra`` goes
    into the run (e.g. ``probes``)."""
    line = [final + slope / 100 * (s - steps) for s in range(1, steps + 1)]
    return {"final": {"eval_loss": final, "diverged": False, "diverged_at": None,
                      "initial_loss": 4.5},
            "curves": {"train_loss": line,
                       "eval_steps": list(range(eval_every, steps + 1, eval_every)),
                       "eval_loss": line[eval_every - 1::eval_every]}, **extra}


def diverged_run(at=2, first=4.5, **extra):
    """A run the trainer stopped at step ``at`` (its first training loss ``first``)."""
    return {"final": {"eval_loss": None, "diverged": True, "diverged_at": at,
                      "initial_loss": first},
            "curves": {"train_loss": [first] + [None] * (at - 1), "eval_steps": [],
                       "eval_loss": []}, **extra}


def stored_record(arms, seeds=(0, 1, 2), steps=STEPS, name="fake", vocab_size=VOCAB,
                  model=None):
    """A ``records.Record`` (its layout checked by ``Record.from_dict``) of ``arms``:
    ``{arm name: (info, [run per seed])}``, each run a dict with ``final`` and, if the code
    under test reads them, ``curves`` or ``probes``; every arm's model has ``vocab_size``. An
    arm given as ``(info, runs, arm_steps)`` has its own number of steps, or with a dict
    there, its own recipe. ``model`` adds fields to every arm's model."""
    def recipe(spec):
        own = spec[2] if len(spec) > 2 else steps
        return dict(own) if isinstance(own, dict) else {"steps": own}

    config = {"data": "none", "seeds": list(seeds),
              "arms": [{"name": arm, "model": {"vocab_size": vocab_size, **(model or {})},
                        "recipe": recipe(spec), "info": spec[0]}
                       for arm, spec in arms.items()]}
    runs = [{"arm": arm, "seed": seed, "final": {}, "curves": {}, "seconds": 0.0, **run}
            for arm, spec in arms.items() for seed, run in zip(seeds, spec[1])]
    data = {"schema": SCHEMA_VERSION, "name": name, "quick": False,
            "description": "written by a test", "measures": "whatever the test stores",
            "command": "none", "config": config, "runs": runs,
            "provenance": dict.fromkeys(PROVENANCE_KEYS)}
    return Record.from_dict(round_floats(data))


class FakeRecord:
    """The parts of ``records.Record`` that ``khop_analysis`` reads."""

    def __init__(self, arms):            # arms: name -> (info, {k: [acc per seed]})
        self._arms = arms
        first = next(iter(arms.values()))[1]
        self.runs = [{"final": {f"accuracy_k{k}": 0.0 for k in first}}]
        self.seeds = list(range(len(next(iter(first.values())))))
        self.name = "fake"

    @property
    def arms(self):
        return list(self._arms)

    def arm(self, name):
        return {"info": self._arms[name][0]}

    def final(self, metric):
        k = int(metric.removeprefix("accuracy_k"))
        return {name: acc[k] for name, (_, acc) in self._arms.items()}


def info(L, d, lr, *families):
    return {"n_layer": L, "d_model": d, "lr": lr, "families": list(families)}


class FakeCurveRecord:
    """The parts of ``records.Record`` that chapter 8's first X1 test reads (``loop_cells``,
    on pointer chasing): arms with info and final accuracies (each the last point of the arm's
    curve for k and seed)."""

    def __init__(self, arms, max_hops=2):  # arms: name -> (info, {k: [[curve] per seed]})
        self._arms = arms
        self.config = {"data": {"max_hops": max_hops}}
        self.seeds = list(range(len(next(iter(arms.values()))[1][1])))

    @property
    def arms(self):
        return list(self._arms)

    def arm(self, name):
        return {"name": name, "info": self._arms[name][0]}

    def final(self, metric):
        k = int(metric.removeprefix("accuracy_k"))
        return {name: [c[-1] for c in curves[k]] for name, (_, curves) in self._arms.items()}



def loop_records():
    """A looped_khop-like and a khop_depth_sweep-like record, one loop count (2), k = 1, 2,
    three seeds: one block once learns k = 1 only, better at 3e-3 than at 1e-3; two distinct
    blocks and the looped block learn both (the looped one more slowly)."""
    flat, rise, slow = [0.1, 0.2, 0.3], [0.2, 0.6, 0.95], [0.1, 0.4, 0.9]
    once = {1: [rise] * 3, 2: [[0.1, 0.2, 0.35]] * 3}
    sweep = FakeCurveRecord({
        "L=1 d=64 lr=0.001": ({"n_layer": 1, "d_model": 64, "lr": 0.001},
                              {1: [flat] * 3, 2: [flat] * 3}),
        "L=1 d=64 lr=0.003": ({"n_layer": 1, "d_model": 64, "lr": 0.003}, once),
        "L=2 d=64 lr=0.003": ({"n_layer": 2, "d_model": 64, "lr": 0.003},
                              {1: [rise] * 3, 2: [rise] * 3})})
    looped = FakeCurveRecord({"1 block x2": (
        {"loops": 2, "d_model": 64, "distinct_arm": "L=2 d=64 lr=0.003"},
        {1: [rise] * 3, 2: [slow] * 3})})
    return looped, sweep
