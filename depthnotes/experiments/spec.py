"""What a named experiment is and how one of its jobs runs: the data it trains on, its arms
(one model config and one training recipe each, a ``TrainConfig`` whatever the data), its
seeds, what it measures, and ``run_job``, at module level so that a worker process can import
it.

A named experiment is a function ``(quick: bool) -> Experiment`` registered with
``register`` in ``EXPERIMENTS``. ``quick=True`` gives a tiny version of the *same* experiment
(same arms and code path, a few steps, smaller depths where the real ones are too slow): it is
what the test suite runs, and ``python -m depthnotes record NAME --quick`` writes it elsewhere,
never over the real record. The real version's configuration is stored in its record; a test
compares it with the definition, so changing a definition without regenerating the record
fails. Experiments that keep their trained models (``keep_models``) also store the weights;
an arm whose ``info`` holds ``"sample"`` (a ``measure.samples.SampleSpec`` as a dict) stores
the text its trained model writes instead, as the run's ``"sample"``.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field

from depthnotes.core.config import ModelConfig
from depthnotes.data.tasks import InductionHops, PointerChasing
from depthnotes.training.loop import TrainConfig


#: The kinds of data an experiment can train on.
DATA_KINDS = ("corpus", "pointer_chasing", "induction_hops")


#: The synthetic tasks an experiment can train on (``tasks.py``), by their kind.
TASKS = {"pointer_chasing": PointerChasing, "induction_hops": InductionHops}


#: At most this many points per stored training-loss curve (longer runs store window means).
CURVE_POINTS = 300


@dataclass(frozen=True)
class Arm:
    """One thing compared: a model and how it is trained. ``info`` holds facts a table needs
    that the config does not say directly (e.g. a sweep point's budget, or its lr rule)."""

    name: str
    model: ModelConfig
    recipe: TrainConfig
    info: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"name": self.name, "model": asdict(self.model), "recipe": asdict(self.recipe),
                "info": dict(self.info)}


@dataclass(frozen=True)
class Experiment:
    """A named experiment: data, arms, seeds, and what is measured (see the module doc)."""

    name: str
    description: str        # what it holds and why, including any cut made to fit the machine
    measures: str           # the per-seed numbers it records
    data: str | PointerChasing | InductionHops   # a corpus name, or a task
    arms: tuple[Arm, ...]
    seeds: tuple[int, ...]
    quick: bool = False
    keep_models: bool = False    # also store every trained model's weights (records.py)

    def __post_init__(self) -> None:
        if not self.arms:
            raise ValueError(f"experiment {self.name!r}: arms must not be empty")
        names = [a.name for a in self.arms]
        if len(set(names)) != len(names):
            raise ValueError(f"experiment {self.name!r}: arm names must be unique, got {names}")
        if not self.seeds or len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"experiment {self.name!r}: seeds must be distinct and at least "
                             f"one, got {self.seeds}")
        for a in self.arms:
            if not isinstance(a.recipe, TrainConfig):
                raise TypeError(f"experiment {self.name!r}, arm {a.name!r}: the recipe must "
                                f"be a TrainConfig (for a task: training.tasks.task_recipe), "
                                f"got {type(a.recipe).__name__}")
            if a.recipe.seed != 0:
                raise ValueError(f"experiment {self.name!r}, arm {a.name!r}: leave the recipe's "
                                 f"seed at 0; the seeds come from Experiment.seeds")

    @property
    def data_kind(self) -> str:
        return task_kind(self.data) or "corpus"

    @property
    def command(self) -> str:
        """The command that (re)generates this experiment's record."""
        return f"python -m depthnotes record {self.name}" + (" --quick" if self.quick else "")

    def config_dict(self) -> dict:
        """Everything the results depend on, as plain JSON values (stored in the record and
        compared with it by the staleness test)."""
        out = {"data": data_dict(self.data), "seeds": list(self.seeds),
               "arms": [a.as_dict() for a in self.arms]}
        if self.keep_models:            # (absent when False: older records stay current)
            out["keep_models"] = True
        return out

    def jobs(self) -> list["Job"]:
        """One job per (arm, seed), arms outermost."""
        return [Job(self.data, arm, seed, self.keep_models)
                for arm in self.arms for seed in self.seeds]


@dataclass(frozen=True)
class Job:
    """One training: an arm of an experiment with one seed (picklable, for a worker)."""

    data: str | PointerChasing | InductionHops
    arm: Arm
    seed: int
    keep_model: bool = False

    @property
    def label(self) -> str:
        return f"{self.arm.name}, seed {self.seed}"

    @property
    def cost(self) -> float:
        """Rough relative cost (steps × layers × width²), for the progress bar's estimate."""
        c = self.arm.model
        return float(self.arm.recipe.steps * c.n_layer * c.d_model ** 2 + 1)


def task_kind(data) -> str | None:
    """The kind of a synthetic task (a key of ``TASKS``), or None for a corpus name."""
    return next((kind for kind, cls in TASKS.items() if isinstance(data, cls)), None)


def data_dict(data) -> dict:
    """The data an experiment trains on, as stored: the corpus with a digest of its tokens
    (so a changed corpus makes a record stale), or the task's fields."""
    kind = task_kind(data)
    if kind:
        return {"kind": kind, **asdict(data), "vocab_size": data.vocab_size,
                "seq_len": data.seq_len}
    from depthnotes.data.corpus import load_corpus

    corpus = load_corpus(data)
    digest = hashlib.sha256()
    for t in (corpus.train, corpus.val):
        digest.update(t.numpy().tobytes())
    return {"kind": "corpus", "name": corpus.name, "vocab_size": corpus.vocab_size,
            "train_tokens": int(corpus.train.numel()), "val_tokens": int(corpus.val.numel()),
            "sha256": digest.hexdigest()[:16]}


def epochs(steps: int, batch_size: int, context: int, train_tokens: int) -> float:
    """Passes over a corpus's training split (``data_dict``'s ``train_tokens``) that ``steps``
    batches of ``batch_size`` windows of ``context`` characters amount to (windows are drawn
    at random, so this counts characters seen over the split's size, not complete passes)."""
    return steps * batch_size * context / train_tokens


def run_job(job: Job) -> dict:
    """Train ``job.arm`` with ``job.seed`` and return its curves and final metrics (plain
    floats, unrounded), and with ``job.keep_model`` the trained weights (``"model_state"``,
    a state dict). The caller (``parallel._call``) has pinned one thread and the seed."""
    model, result = (_run_task if task_kind(job.data) else _run_corpus)(job)
    if job.keep_model:
        result["model_state"] = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return result


def _run_corpus(job: Job) -> tuple[object, dict]:
    from depthnotes.data.corpus import load_corpus
    from depthnotes.core.model import Transformer
    from depthnotes.measure.record_probes import final_probes, make_probe
    from depthnotes.training.loop import train

    corpus = load_corpus(job.data)
    model = Transformer(job.arm.model, seed=job.seed)
    probe = make_probe(job.arm.info, model, corpus)     # None unless the arm names one
    res = train(model, corpus, job.arm.recipe.replace(seed=job.seed),
                on_step=probe.on_step if probe else None)
    probes = final_probes(model, corpus, job.arm, seed=job.seed)  # if info asks for any
    every, curve = window_means(res.train_losses)
    result = {"curves": {"train_loss": curve, "train_loss_every": every,
                         "eval_steps": list(res.eval_steps),
                         "eval_loss": list(res.eval_losses)},
              "final": {"eval_loss": res.final_eval_loss,
                        "best_eval_loss": res.best_eval_loss,
                        "train_loss": res.final_train_loss,
                        "initial_loss": res.initial_loss,
                        "steps_run": res.steps_run, "diverged": res.diverged,
                        "diverged_at": res.diverged_at, "reason": res.reason,
                        **probes},
              "seconds": res.seconds}
    if probe is not None:
        result["probes"] = probe.result(model)
    if "sample" in job.arm.info:          # what the trained model writes (measure.samples)
        from depthnotes.measure.samples import SampleSpec, continue_text

        result["sample"] = continue_text(model, corpus, SampleSpec(**job.arm.info["sample"]))
    return model, result


def _run_task(job: Job) -> tuple[object, dict]:
    from depthnotes.training.tasks import train_on_task

    t0 = time.perf_counter()
    model, run = train_on_task(job.arm.model, job.data, job.arm.recipe.replace(seed=job.seed))
    every, curve = window_means(list(run.losses))
    curves = {"train_loss": curve, "train_loss_every": every}
    if run.curve_steps:
        curves["accuracy_steps"] = list(run.curve_steps)
        curves.update({f"accuracy_k{k}": list(v) for k, v in run.accuracy_curves.items()})
    final = {f"accuracy_k{k}": a for k, a in run.accuracy.items()}
    for k, (acc, n) in (run.long_accuracy or {}).items():
        final[f"long_accuracy_k{k}"], final[f"long_queries_k{k}"] = acc, n
    final.update(steps_run=len(run.losses), diverged=run.diverged)
    return model, {"curves": curves, "final": final, "seconds": time.perf_counter() - t0}


def window_means(values: list[float], points: int = CURVE_POINTS) -> tuple[int, list[float]]:
    """``(w, means)``: the curve as means of ``w`` consecutive values, with ``w`` the smallest
    that gives at most ``points`` of them (the last window may be shorter). ``w = 1`` keeps
    every value. Entry i covers steps ``i*w`` to ``(i+1)*w - 1``."""
    w = max(1, math.ceil(len(values) / points))
    return w, [sum(values[i:i + w]) / len(values[i:i + w]) for i in range(0, len(values), w)]


EXPERIMENTS: dict[str, Callable[[bool], Experiment]] = {}


def register(builder: Callable[[bool], Experiment]) -> Callable[[bool], Experiment]:
    EXPERIMENTS[builder.__name__] = builder
    return builder
