"""Records: the long runs of named experiments, stored as JSON and loaded by the notebooks.

A notebook's own run is the fast version of an experiment; where an effect needs more
compute, a record holds the longer run (book/methods.md, "The records").
``run_experiment`` trains every arm × seed of a named experiment (``experiments.registry``)
in parallel worker processes and returns the record; ``write_record`` stores it as
``notebooks/records/NAME.json``; the command ``python -m depthnotes record NAME`` does both. A record holds:

* ``config``: everything the results depend on (data, seeds, every arm's model config and
  training recipe), exactly as ``Experiment.config_dict`` gives it;
* ``runs``: one entry per arm and seed, with its curves (``curves``) and final metrics
  (``final``) and its training time;
* ``provenance``: the commit, package versions, the CPU, the number of workers, the load and
  the wall time of the whole run, and the date.

Floats are stored with at most 6 significant digits (``round_floats``): a last bit that
differs between two CPUs must not show in a stored number. A non-finite value (the loss of a
diverged run) is stored as null; the run's ``final.reason`` says what happened.

``load_record(NAME)`` finds a record from any working directory: first ``records/NAME.json``
next to the working directory (a notebook runs in ``notebooks/``, and a handed-out folder of
notebooks carries its ``records/``), then the ``notebooks/records/`` of the repository the
package was installed from. A record whose ``config`` no longer matches its experiment's
definition is stale: ``check_current`` says which fields differ and which command regenerates
it (the test suite runs it on every stored record).

Quick records (``--quick``: the tiny version of the experiment the tests run) are named
``NAME.quick.json`` and never written to the repository's records folder.

In a chapter::

    from depthnotes.page.plots import plot_seed_curves, plot_seed_finals
    from depthnotes.experiments.records import load_record
    from depthnotes.verdicts.evidence import RULE, compare_many

    rec = load_record("NAME")
    print(RULE)                         # the test, stated before the result
    cmp = compare_many(rec.final("eval_loss"), metric="validation loss")   # >= 3 seeds/arm
    print(cmp.table())
    plot_seed_curves(ax, *rec.curves(rec.arms[0], "eval_loss"), label=rec.arms[0])
"""

from __future__ import annotations

import json
import math
import os
import platform
import subprocess
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from depthnotes.experiments.registry import EXPERIMENTS, get_experiment
from depthnotes.experiments.spec import Experiment, run_job
from depthnotes.experiments.journal import Journal
from depthnotes.experiments.parallel import available_cores, run_parallel

#: Version of the record layout; bump it when the keys change.
SCHEMA_VERSION = 1
#: Significant digits kept for every stored float.
DIGITS = 6
#: The repository's records folder (exists in a checkout with an editable install).
REPO_RECORDS = Path(__file__).resolve().parents[2] / "notebooks" / "records"
#: The key under which ``run_experiment`` hands kept models to ``write_record`` (not JSON).
MODELS_KEY = "models"

#: Keys every record has, and the keys of each of its runs.
RECORD_KEYS = ("schema", "name", "quick", "description", "measures", "command", "config",
               "runs", "provenance")
RUN_KEYS = ("arm", "seed", "curves", "final", "seconds")
PROVENANCE_KEYS = ("commit", "versions", "machine", "workers", "wall_seconds", "date")


# -- reading a record ------------------------------------------------------------------------
@dataclass(frozen=True)
class Record:
    """A loaded record (see the module docstring for what each part holds)."""

    name: str
    quick: bool
    description: str
    measures: str
    command: str
    config: dict
    runs: list
    provenance: dict
    path: Path | None = None

    @classmethod
    def from_dict(cls, data: dict, path: Path | None = None) -> "Record":
        """A ``Record`` of a record dict (as ``run_experiment`` returns or a file holds),
        its layout checked."""
        validate_record(data, where=str(path) if path else f"record {data.get('name')}")
        return cls(**{k: data[k] for k in RECORD_KEYS if k != "schema"}, path=path)

    @property
    def arms(self) -> list[str]:
        """The arms' names, in the experiment's order."""
        return [a["name"] for a in self.config["arms"]]

    @property
    def seeds(self) -> list[int]:
        return list(self.config["seeds"])

    def arm(self, name: str) -> dict:
        """One arm's stored definition: ``name``, ``model``, ``recipe``, ``info``."""
        for a in self.config["arms"]:
            if a["name"] == name:
                return a
        raise KeyError(f"record {self.name!r} has no arm {name!r}; its arms are {self.arms}")

    def select(self, arms) -> "Record":
        """This record with only ``arms`` (in this record's order) and their runs: e.g. each
        shape's best rate, once a rule has chosen it, so that every later reading of the
        record sees the chosen arms only."""
        keep = set(arms)
        missing = sorted(keep - set(self.arms))
        if missing:
            raise KeyError(f"record {self.name!r} has no arms {missing}")
        return Record(name=self.name, quick=self.quick, description=self.description,
                      measures=self.measures, command=self.command,
                      config={**self.config, "arms": [a for a in self.config["arms"]
                                                      if a["name"] in keep]},
                      runs=[r for r in self.runs if r["arm"] in keep],
                      provenance=self.provenance, path=self.path)

    def run(self, arm: str, seed: int) -> dict:
        """The stored run of ``arm`` with ``seed``."""
        for r in self.runs:
            if r["arm"] == arm and r["seed"] == seed:
                return r
        raise KeyError(f"record {self.name!r} has no run of arm {arm!r} with seed {seed}; "
                       f"arms {self.arms}, seeds {self.seeds}")

    def final(self, metric: str) -> dict[str, list]:
        """``{arm: [metric of each seed, in seed order]}`` (the input of ``evidence.compare_many``)."""
        out = {}
        for arm in self.arms:
            runs = [self.run(arm, s) for s in self.seeds]
            if metric not in runs[0]["final"]:
                raise KeyError(f"record {self.name!r} has no final metric {metric!r}; it has "
                               f"{sorted(runs[0]['final'])}")
            out[arm] = [r["final"][metric] for r in runs]
        return out

    def curves(self, arm: str, key: str) -> tuple[list, list]:
        """``(steps, values)`` of ``arm``'s curve ``key``, one list per seed (in seed order):
        what ``plots.plot_seed_curves(ax, steps, values)`` draws."""
        pairs = [self.curve(arm, key, s) for s in self.seeds]
        return [p[0] for p in pairs], [p[1] for p in pairs]

    def curve(self, arm: str, key: str, seed: int) -> tuple[list, list]:
        """``(steps, values)`` of one stored curve: ``"train_loss"`` (window means, plotted
        at each window's last step), ``"eval_loss"`` (at its evaluation steps) or a task's
        ``"accuracy_k<k>"`` (at its ``accuracy_steps``)."""
        curves = self.run(arm, seed)["curves"]
        if key not in curves:
            raise KeyError(f"record {self.name!r} has no curve {key!r}; it has "
                           f"{sorted(k for k, v in curves.items() if isinstance(v, list))}")
        values = curves[key]
        steps_key = "eval_steps" if key == "eval_loss" else \
            "accuracy_steps" if key.startswith("accuracy_") else None
        if steps_key is not None:
            return list(curves[steps_key]), list(values)
        every = curves.get(f"{key}_every", 1)
        return [min((i + 1) * every, self.arm(arm)["recipe"]["steps"]) for i in
                range(len(values))], list(values)


def combine_records(*records: Record) -> Record:
    """One ``Record`` holding the arms and runs of several records of the same data and seeds,
    such as a record and the one that adds learning rates to its arms
    (``deepnorm_depth_comparison`` and ``deepnorm_depth_lr``): a chapter reads a grid spread
    over records as one record, so a rule scores every arm at its best rate over all of them.
    Each record is checked against its own definition before (``check_current``); the result
    is named after all of them and is not a file."""
    if not records:
        raise ValueError("combine_records needs at least one record")
    first = records[0]
    for r in records[1:]:
        for key in ("data", "seeds"):
            if r.config[key] != first.config[key]:
                raise ValueError(f"records {first.name!r} and {r.name!r} differ in {key}: "
                                 f"{first.config[key]!r} vs {r.config[key]!r}")
        if r.quick != first.quick:
            raise ValueError(f"records {first.name!r} and {r.name!r}: one is quick, one not")
    arms = [a for r in records for a in r.config["arms"]]
    names = [a["name"] for a in arms]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise ValueError(f"records {[r.name for r in records]} share arm names {repeated}")
    return Record(name=" + ".join(r.name for r in records), quick=first.quick,
                  description="\n\n".join(r.description for r in records),
                  measures=first.measures, command="; ".join(r.command for r in records),
                  config={**first.config, "arms": arms},
                  runs=[run for r in records for run in r.runs],
                  provenance=first.provenance)


def find_record(name: str, quick: bool = False) -> Path:
    """Where record ``name`` is: ``records/`` next to the working directory, else the
    repository's ``notebooks/records/``; FileNotFoundError naming the command otherwise."""
    filename = record_filename(name, quick)
    candidates = [Path.cwd() / "records" / filename, REPO_RECORDS / filename]
    for path in candidates:
        if path.is_file():
            return path
    command = f"python -m depthnotes record {name}" + (" --quick" if quick else "")
    raise FileNotFoundError(
        f"record {filename} not found (looked in {', '.join(str(p.parent) for p in candidates)})"
        f"; `{command}` regenerates it")


def load_record(name: str, directory: str | os.PathLike | None = None,
                quick: bool = False) -> Record:
    """Record ``name`` from ``directory``, or found by ``find_record``; its layout checked."""
    if directory is None:
        path = find_record(name, quick)
    else:
        path = Path(directory) / record_filename(name, quick)
        if not path.is_file():
            raise FileNotFoundError(f"record {path} not found; `python -m depthnotes record "
                                    f"{name}{' --quick' if quick else ''} --out {directory}` "
                                    f"writes it")
    return Record.from_dict(json.loads(path.read_text()), path)


def record_filename(name: str, quick: bool = False) -> str:
    return f"{name}.quick.json" if quick else f"{name}.json"


def validate_record(data: dict, where: str = "record") -> None:
    """Raise ValueError unless ``data`` has the record layout (keys, types, one run per arm
    and seed, every float within ``DIGITS`` significant digits)."""
    def fail(msg):
        raise ValueError(f"{where}: {msg}")

    if not isinstance(data, dict):
        fail(f"a record is a JSON object, got {type(data).__name__}")
    missing = [k for k in RECORD_KEYS if k not in data]
    if missing:
        fail(f"missing keys {missing}")
    if data["schema"] != SCHEMA_VERSION:
        fail(f"schema {data['schema']!r}, this package reads schema {SCHEMA_VERSION}; "
             f"regenerate it with `python -m depthnotes record {data['name']}`")
    for key in ("name", "description", "measures", "command"):
        if not isinstance(data[key], str) or not data[key]:
            fail(f"{key} must be a non-empty string")
    if not isinstance(data["quick"], bool):
        fail("quick must be true or false")
    config = data["config"]
    if not isinstance(config, dict) or not {"data", "seeds", "arms"} <= set(config):
        fail("config must hold data, seeds and arms")
    for arm in config["arms"]:
        if not {"name", "model", "recipe", "info"} <= set(arm):
            fail(f"arm {arm.get('name')!r} must hold name, model, recipe and info")
    expected = {(a["name"], s) for a in config["arms"] for s in config["seeds"]}
    got = []
    for r in data["runs"]:
        if not all(k in r for k in RUN_KEYS):
            fail(f"run {r.get('arm')!r}/{r.get('seed')!r} is missing "
                 f"{[k for k in RUN_KEYS if k not in r]}")
        if not isinstance(r["final"], dict) or not isinstance(r["curves"], dict):
            fail(f"run {r['arm']!r}/{r['seed']}: final and curves must be objects")
        got.append((r["arm"], r["seed"]))
    if sorted(got) != sorted(expected):
        fail(f"runs must be one per arm and seed: expected {sorted(expected)}, got {sorted(got)}")
    prov = data["provenance"]
    if not isinstance(prov, dict) or any(k not in prov for k in PROVENANCE_KEYS):
        fail(f"provenance must hold {list(PROVENANCE_KEYS)}")
    long = [x for x in _floats(data) if x != round_float(x)]
    if long:
        fail(f"{len(long)} floats carry more than {DIGITS} significant digits, e.g. {long[0]!r}")


def _floats(obj):
    if isinstance(obj, float):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _floats(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _floats(v)


# -- is a stored record still what the package defines? ---------------------------------------
#: Config fields added after records were written, each with the default that computes
#: exactly what the code computed before the field existed (checked by the tests of each
#: option). A stored record without such a field, where the current value is that default,
#: is not stale: the option did not exist, and its default changes nothing.
ADDED_FIELDS = {
    "n_unique_blocks": None,     # ModelConfig: every block distinct (chapter 8's looping off)
    "ln_scaling": "none",        # ModelConfig: LayerNorm outputs unscaled
    "eval_every": 0,             # a task's recipe: no accuracy curves
    "layout": "query_tokens",    # PointerChasing: one token per (k, x) query
    "eval_seed": None,           # TrainConfig: held-out batches drawn from each run's seed
    "eval_sequences": 256,       # TrainConfig: fresh sequences scoring a task (unused on text)
    "long_span": 0,              # TrainConfig: no long-chain accuracy (tasks only)
    "block_lr_scale": 1.0,       # TrainConfig: the blocks train at the global rate
}

#: The keys of a task recipe as records stored it before tasks were trained with
#: ``TrainConfig`` (``training.tasks.task_recipe``), and the ``TrainConfig`` field each became.
LEGACY_TASK_RECIPE = {"steps": "steps", "batch_size": "batch_size", "lr": "lr",
                      "warmup": "warmup_steps", "eval_sequences": "eval_sequences",
                      "eval_every": "eval_every", "long_span": "long_span"}


def current_form(config: dict) -> dict:
    """A stored config as today's definitions write it: a task record whose arms' recipes
    have the old keys (``LEGACY_TASK_RECIPE``) gets the ``TrainConfig`` those keys meant
    (``task_recipe`` with the task's sequence length), so that it stays current until it is
    regenerated. Anything else is returned as it is."""
    from dataclasses import asdict

    from depthnotes.training.tasks import task_recipe

    arms = config.get("arms", [])
    if not any(set(a.get("recipe", {})) <= set(LEGACY_TASK_RECIPE)
               and "warmup" in a.get("recipe", {}) for a in arms):
        return config
    task = stored_task(config["data"])
    out = dict(config, arms=[])
    for a in arms:
        r = a["recipe"]
        if set(r) <= set(LEGACY_TASK_RECIPE):
            r = asdict(task_recipe(task, **{LEGACY_TASK_RECIPE[k]: v for k, v in r.items()}))
        out["arms"].append(dict(a, recipe=r))
    return out


def stored_task(data: dict):
    """The synthetic task a record's stored ``data`` describes (``spec.data_dict``'s inverse
    for tasks)."""
    from depthnotes.experiments.spec import TASKS

    fields = {k: (tuple(v) if isinstance(v, list) else v) for k, v in data.items()
              if k not in ("kind", "vocab_size", "seq_len")}
    task = TASKS[data["kind"]](**fields)
    if task.seq_len != data["seq_len"]:
        raise ValueError(f"stored task {data} does not rebuild to its sequence length")
    return task


def config_differences(stored, current, path: str = "config") -> list[str]:
    """Where two configs differ, as ``path: stored -> current`` lines (empty if equal). A
    field missing from ``stored`` is no difference when it is in ``ADDED_FIELDS`` and
    ``current`` holds its default there."""
    if isinstance(stored, dict) and isinstance(current, dict):
        out = []
        for k in sorted(set(stored) | set(current), key=str):
            if k not in stored and k in ADDED_FIELDS and current[k] == ADDED_FIELDS[k]:
                continue
            if k not in stored:
                out.append(f"{path}.{k}: missing in the record -> {current[k]!r}")
            elif k not in current:
                out.append(f"{path}.{k}: {stored[k]!r} -> no longer defined")
            else:
                out += config_differences(stored[k], current[k], f"{path}.{k}")
        return out
    if isinstance(stored, list) and isinstance(current, list) and len(stored) == len(current):
        return [d for i, (a, b) in enumerate(zip(stored, current))
                for d in config_differences(a, b, f"{path}[{i}]")]
    return [] if stored == current else [f"{path}: {stored!r} -> {current!r}"]


def check_current(record: Record, experiment: Experiment | None = None) -> None:
    """Raise ValueError, naming the regeneration command, when ``record``'s stored config
    differs from its experiment's definition in the package (``experiment`` defaults to the
    registered one of the same name and kind)."""
    if experiment is None:
        experiment = get_experiment(record.name, quick=record.quick)
    diffs = config_differences(round_floats(current_form(record.config)),
                               round_floats(experiment.config_dict()))
    if diffs:
        shown = "\n  ".join(diffs[:8]) + (f"\n  ... ({len(diffs) - 8} more)"
                                          if len(diffs) > 8 else "")
        raise ValueError(
            f"record {record.name!r} ({record.path}) is stale: its configuration differs from "
            f"the experiment defined in depthnotes/experiments/:\n  {shown}\n"
            f"Regenerate it with `{experiment.command}`.")


# -- running and writing ---------------------------------------------------------------------
def run_experiment(experiment: Experiment, *, workers: int | None = None,
                   desc: str | None = None, journal: Journal | None = None) -> dict:
    """Train every arm × seed of ``experiment`` (in parallel) and return its record as a
    JSON-ready dict (rounded). With a ``journal`` (``experiments.journal``), each finished run
    is written to it at once, and the runs it already holds are not trained again."""
    jobs = experiment.jobs()
    workers = available_cores() if workers is None else workers
    load = _load_average()
    prov = provenance()      # before the run: the commit of the code that runs
    done = journal.done() if journal is not None else {}
    todo = [i for i, j in enumerate(jobs) if (j.arm.name, j.seed) not in done]

    def keep(k: int, result: dict) -> None:
        job = jobs[todo[k]]
        journal.add(job.arm.name, job.seed, result, prov["commit"], prov["date"])

    t0 = time.perf_counter()
    fresh = run_parallel(run_job, [jobs[i] for i in todo], workers=workers,
                         desc=desc or experiment.name, costs=[jobs[i].cost for i in todo],
                         labels=[jobs[i].label for i in todo],
                         on_result=keep if journal is not None else None)
    wall = time.perf_counter() - t0
    results = [done[(j.arm.name, j.seed)]["result"] if (j.arm.name, j.seed) in done else None
               for j in jobs]
    for i, r in zip(todo, fresh):
        results[i] = r
    models = {}                 # (arm, seed) -> state dict, for an experiment that keeps them
    for j, r in zip(jobs, results):
        if "model_state" in r:
            models[(j.arm.name, j.seed)] = r.pop("model_state")
    runs = [{"arm": j.arm.name, "seed": j.seed, **r} for j, r in zip(jobs, results)]
    prov = {**prov, "workers": min(workers, len(jobs)), "load_average_before": load,
            "wall_seconds": wall}
    if done:                    # made in several sittings: say so, and what ran where
        prov["resumed"] = {
            "runs_from_journal": len(done),
            "commits": sorted({e["commit"] or "unknown" for e in done.values()}),
            "dates": sorted({e["date"] for e in done.values()}),
            "earlier_wall_seconds": journal.earlier_wall()}
    record = {
        "schema": SCHEMA_VERSION, "name": experiment.name, "quick": experiment.quick,
        "description": experiment.description, "measures": experiment.measures,
        "command": experiment.command, "config": experiment.config_dict(), "runs": runs,
        "provenance": prov}
    record = round_floats(record)
    validate_record(record, where=f"record {experiment.name}")
    if models:
        record[MODELS_KEY] = models
    return record


def write_record(record: dict, directory: str | os.PathLike | None = None) -> Path:
    """Write ``record`` as ``directory/NAME.json`` (``NAME.quick.json`` for a quick one),
    and the trained weights an experiment with ``keep_models`` returned beside it as
    ``NAME.models.pt`` (``NAME.quick.models.pt``). ``directory`` defaults to the repository's
    records folder, which a quick record may not be written to."""
    models = record.get(MODELS_KEY)
    record = {k: v for k, v in record.items() if k != MODELS_KEY}
    validate_record(record, where=f"record {record.get('name')}")
    directory = REPO_RECORDS if directory is None else Path(directory)
    if record["quick"] and directory.resolve() == REPO_RECORDS:
        raise ValueError(f"a quick record is not written to {REPO_RECORDS}; pass another "
                         f"directory (the command's --out)")
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / record_filename(record["name"], record["quick"])
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n")
    if models:
        import torch

        torch.save({f"{arm}|{seed}": state for (arm, seed), state in models.items()},
                   path.with_name(models_filename(record["name"], record["quick"])))
    return path


def models_filename(name: str, quick: bool = False) -> str:
    return record_filename(name, quick).removesuffix(".json") + ".models.pt"


def load_model(record: Record, arm: str, seed: int):
    """The trained model of ``arm`` and ``seed``, from the weights stored beside ``record``
    (an experiment with ``keep_models``), in eval mode. Its config is the arm's."""
    import torch

    from depthnotes.core.config import ModelConfig
    from depthnotes.core.model import Transformer

    record.run(arm, seed)                                   # KeyError naming what exists
    path = record.path.with_name(models_filename(record.name, record.quick)) \
        if record.path is not None else None
    if path is None or not path.is_file():
        raise FileNotFoundError(f"record {record.name!r} has no stored models "
                                f"({path}); `{record.command}` writes them")
    states = torch.load(path, weights_only=True)
    model = Transformer(ModelConfig(**record.arm(arm)["model"]))
    model.load_state_dict(states[f"{arm}|{seed}"])
    return model.eval()


def provenance() -> dict:
    """What a record's numbers depend on besides the config: the code and the machine."""
    import numpy
    import torch

    from depthnotes import __version__
    from depthnotes.training.runtime import machine_info

    machine = asdict(machine_info())
    machine["threads"] = 1              # every job runs with one thread (parallel._call)
    machine.pop("load_average", None)   # stored separately, before the run
    machine["platform"] = platform.platform()
    return {"commit": git_commit(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d"),
            "versions": {"depthnotes": __version__, "torch": torch.__version__,
                         "numpy": numpy.__version__, "python": platform.python_version()},
            "machine": machine}


def git_commit() -> str | None:
    """The repository's commit (with ``-dirty`` when files differ from it), or None."""
    repo = Path(__file__).resolve().parents[2]
    try:
        sha = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], check=True,
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no", "--", "depthnotes"],
                               check=True, capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return sha + ("-dirty" if dirty.strip() else "") if sha else None


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (OSError, AttributeError):
        return None


# -- numbers ---------------------------------------------------------------------------------
def round_float(x: float, digits: int = DIGITS) -> float | None:
    """``x`` with at most ``digits`` significant digits; None if it is not finite."""
    if not math.isfinite(x):
        return None
    return float(f"{x:.{digits}g}")


def round_floats(obj, digits: int = DIGITS):
    """A copy of ``obj`` (dicts, lists, tuples, numbers) with every float rounded."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        return round_float(obj, digits)
    if isinstance(obj, dict):
        return {str(k): round_floats(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [round_floats(v, digits) for v in obj]
    raise TypeError(f"a record holds only numbers, strings, lists and dicts, got "
                    f"{type(obj).__name__} {obj!r}")


def list_experiments() -> list[dict]:
    """Every named experiment with its runs and the wall time of its stored record (None
    when there is none)."""
    out = []
    for name in EXPERIMENTS:
        exp = get_experiment(name)
        try:
            rec = load_record(name)
            wall, date = rec.provenance["wall_seconds"], rec.provenance["date"]
            workers = rec.provenance["workers"]
        except FileNotFoundError:
            wall = date = workers = None
        out.append({"name": name, "runs": len(exp.jobs()), "wall_seconds": wall,
                    "workers": workers, "date": date, "description": exp.description})
    return out
