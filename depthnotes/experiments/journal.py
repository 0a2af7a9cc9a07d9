"""A record's journal: each finished run written to disk as soon as it finishes, so that a
record longer than a working session can be made in several sittings.

``python -m depthnotes record NAME`` keeps ``NAME.journal/`` beside the record while it runs:
one JSON file per finished (arm, seed) run, holding the run's result, the commit of the code
that ran it, and the hash of the experiment's configuration (``config_hash``). Run the same
command again after an interruption and the runs already in the journal are not trained
again; the record is written, and the journal removed, when every run is done.

A journal written under another configuration is refused with an error naming it (its runs
would not belong to the record the experiment now defines): delete it, or restore the
definition. The record says that it was resumed (``provenance["resumed"]``: how many runs
came from the journal, the commits and dates they ran at, and the wall time of the earlier
sittings), so that its wall time is not mistaken for the whole cost.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import re
import shutil
import time

#: A journal's files: ``run-<arm>-seed<seed>.json`` per finished run (the weights of an
#: experiment that keeps its models beside it as ``.pt``) and one ``sittings.json``.
SITTINGS = "sittings.json"


def config_hash(config: dict) -> str:
    """A short hash of an experiment's configuration (``Experiment.config_dict()``)."""
    text = json.dumps(config, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def journal_dir(record_dir: str | os.PathLike, name: str,
                quick: bool = False) -> pathlib.Path:
    """Where the journal of record ``name`` lives while it is being made."""
    return pathlib.Path(record_dir) / (f"{name}.quick.journal" if quick else f"{name}.journal")


def _run_file(directory: pathlib.Path, arm: str, seed: int) -> pathlib.Path:
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", arm)
    return directory / f"run-{slug}-seed{seed}.json"


class Journal:
    """The finished runs of one experiment's record, on disk (see the module's docstring)."""

    def __init__(self, directory: str | os.PathLike, config: dict):
        self.directory = pathlib.Path(directory)
        self.hash = config_hash(config)
        self.started = time.perf_counter()
        self.sittings = self._read_sittings()

    def _read_sittings(self) -> list[dict]:
        path = self.directory / SITTINGS
        if not path.exists():
            return []
        data = json.loads(path.read_text())
        if data.get("config_hash") != self.hash:
            raise ValueError(
                f"the journal {self.directory} was written under another configuration of "
                f"this experiment (config hash {data.get('config_hash')}, now {self.hash}); "
                f"its runs do not belong to the record now defined: delete the folder to "
                f"start again, or restore the experiment's definition")
        return data["sittings"]

    def done(self, weights: bool = True) -> dict[tuple[str, int], dict]:
        """``{(arm, seed): entry}`` of the runs already finished (entry: ``result``,
        ``commit``, ``date``; ``result["model_state"]`` loaded back for kept models unless
        ``weights`` is False: counting the finished runs need not read the weights)."""
        out = {}
        if not self.directory.exists():
            return out
        for path in sorted(self.directory.glob("run-*.json")):
            entry = json.loads(path.read_text())
            if entry.get("config_hash") != self.hash:
                raise ValueError(f"{path} was written under another configuration (config "
                                 f"hash {entry.get('config_hash')}, now {self.hash}): delete "
                                 f"{self.directory} to start again")
            kept = path.with_suffix(".pt")
            if weights and kept.exists():
                import torch

                entry["result"]["model_state"] = torch.load(kept, weights_only=True)
            out[(entry["arm"], entry["seed"])] = entry
        return out

    def add(self, arm: str, seed: int, result: dict, commit: str | None, date: str) -> None:
        """Write one finished run (atomically: a run half-written when the session stops is
        not read back as finished)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = _run_file(self.directory, arm, seed)
        result = dict(result)
        state = result.pop("model_state", None)
        if state is not None:
            import torch

            tmp = path.with_suffix(".pt.tmp")
            torch.save(state, tmp)
            tmp.replace(path.with_suffix(".pt"))
        entry = {"config_hash": self.hash, "arm": arm, "seed": seed, "commit": commit,
                 "date": date, "result": result}
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(entry, ensure_ascii=False))  # NaN kept as is
        tmp.replace(path)
        self._write_sittings()

    def _write_sittings(self) -> None:
        """This sitting's wall time so far, beside the earlier sittings'."""
        now = {"wall_seconds": round(time.perf_counter() - self.started, 1)}
        data = {"config_hash": self.hash, "sittings": [*self.sittings, now]}
        tmp = self.directory / (SITTINGS + ".tmp")
        tmp.write_text(json.dumps(data))
        tmp.replace(self.directory / SITTINGS)

    def earlier_wall(self) -> float:
        """The wall time of the earlier sittings (their time up to their last finished run)."""
        return round(sum(s["wall_seconds"] for s in self.sittings), 1)

    def remove(self) -> None:
        """Delete the journal (once the record it fed is written)."""
        shutil.rmtree(self.directory, ignore_errors=True)
