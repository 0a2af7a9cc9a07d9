"""The records section of the Methods and history page, read from the stored records.

Every trained result in the book rests on a record in ``notebooks/records/`` (see
``depthnotes.experiments.records``). The chapters show a record's findings; the page
``book/methods.md`` is where a reader checks what each run was. Nothing here is typed: each row
is read from the record file itself (its description, its runs, its provenance), so the page
cannot drift from what was run. :func:`render_records` writes the fragment the page includes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

#: "Chapter 6 (C14): ..." or "Chapter 3's calibration ...": the chapter a description names.
_CHAPTER = re.compile(r"Chapter (\d)")
#: "Chapter 5 (C9 depth, C12): ...": the claims a description names first.
_CLAIMS = re.compile(r"^Chapter \d \(([^)]*)\)")


def _minutes(seconds) -> str:
    return "not stored" if seconds is None else f"{seconds / 60:.1f} min"


def record_rows(root: Path) -> list[dict]:
    """One dict per stored record (quick records excluded), in chapter then name order."""
    rows = []
    for path in sorted((root / "notebooks" / "records").glob("*.json")):
        data = json.loads(path.read_text())
        if data.get("quick"):
            continue
        description = data["description"]
        chapter = _CHAPTER.search(description)
        runs = data["runs"]
        prov = data.get("provenance", {})
        recipes = [a.get("recipe", {}) for a in data["config"]["arms"]]
        held_out = ("one seed" if len({r["seed"] for r in runs}) < 2 else
                    "task sequences, the same for every seed"
                    if not isinstance(data["config"].get("data"), str) else
                    "the same for every seed" if all(r.get("eval_seed") is not None
                                                     for r in recipes) else
                    "drawn from each seed")
        rows.append({
            "name": data["name"],
            "chapter": chapter.group(1) if chapter else "?",
            "claims": (_CLAIMS.match(description).group(1) if _CLAIMS.match(description)
                       else "supporting run"),
            "description": description,
            "measures": data.get("measures", ""),
            "arms": len({r["arm"] for r in runs}),
            "seeds": sorted({r["seed"] for r in runs}),
            "runs": len(runs),
            "wall": _minutes(prov.get("wall_seconds")),
            "workers": prov.get("workers"),
            "date": prov.get("date", "not stored"),
            "command": data.get("command", f"python -m depthnotes record {data['name']}"),
            "held_out": held_out,
        })
    return sorted(rows, key=lambda r: (r["chapter"], r["name"]))


#: The stated thresholds the verdicts use, by module of ``depthnotes.verdicts`` and name: the
#: methods page lists each with its value and the comment its module gives it.
THRESHOLDS = (
    ("evidence", "MIN_SEEDS"), ("evidence", "T_RATIO"), ("evidence", "FLAT_EXPONENT"),
    ("ch3_chasing", "ACCURACY_MARGIN"), ("ch3_chasing", "CHAINED"), ("ch3_chasing", "SOLVED"),
    ("ch4_trainability", "UNIGRAM_MARGIN"), ("ch4_trainability", "FLAT_SLOPE"),
    ("ch4_trainability", "FEW_DOZEN"), ("ch4_trainability", "LOSS_MARGIN"),
    ("ch4_trainability", "EVAL_TAIL"), ("ch4_trainability", "NOWHERE_RATES"),
    ("ch5_fixes", "SPIKE_STEPS"), ("ch5_fixes", "SPIKE_NATS"),
    ("ch6_budget", "BASIN_FLOOR"), ("ch6_budget", "BROAD_SHAPES"),
    ("ch6_budget", "ASPECT_CENTRE"), ("ch6_budget", "ASPECT_FACTOR"),
    ("ch6_budget", "DRIFT_SPLIT"),
    ("ch7_latency", "C16_MIN_R2"), ("ch7_latency", "C16_SLOPE_FACTOR"),
    ("ch7_latency", "RATIO_MARGIN"), ("ch7_latency", "C17_MIN_RATIO"),
    ("ch7_latency", "C17_CAVEAT_FACTOR"), ("ch8_depth", "TRANSFER_MARGIN"),
)


def _doc_comment(source: str, name: str) -> str:
    """The ``#:`` comment lines just above ``name = ...`` in a module's source."""
    lines = source.splitlines()
    at = next(i for i, line in enumerate(lines) if re.match(rf"{name}\s*=", line))
    doc = []
    for line in reversed(lines[:at]):
        if not line.startswith("#:"):
            break
        doc.insert(0, line[2:].strip())
    return " ".join(doc)


def render_thresholds() -> str:
    """A table of ``THRESHOLDS``: where each lives, its value and what it is for."""
    import importlib
    import inspect

    out = ["| threshold | value | what it is for |", "|---|---|---|"]
    for module_name, name in THRESHOLDS:
        module = importlib.import_module(f"depthnotes.verdicts.{module_name}")
        doc = _doc_comment(inspect.getsource(module), name).replace("|", "/")
        out.append(f"| `{module_name}.{name}` | {getattr(module, name):g} | {doc} |")
    return "\n".join(out) + "\n"


def render_rule() -> str:
    """The evidence library's rule, as the library states it (``evidence.RULE``)."""
    from depthnotes.verdicts.evidence import RULE

    return RULE + "\n"


def render_records(root: Path) -> str:
    """The MyST fragment: a table of every record, then each record's full description in a
    dropdown (what was run, what was measured, the command that runs it again)."""
    rows = record_rows(root)
    total = sum(r["runs"] for r in rows)
    out = [f"{len(rows)} records, {total:,} training runs in all. Each row is read from the "
           "record file; the dropdowns below give each record's full description. *Held-out "
           "text*: whether every seed was scored on the same held-out batches, or each on "
           "batches drawn from its own seed (records made before the fixed evaluation set, "
           "or adding rates to one; their evaluation noise widens the seed spread, so a "
           "comparison is more often within noise, not less).", "",
           "| chapter | record | for | runs (arms x seeds) | held-out text | wall time | "
           "recorded |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['chapter']} | `{r['name']}` | {r['claims']} | {r['runs']} "
                   f"({r['arms']} x {len(r['seeds'])}) | {r['held_out']} | {r['wall']} | "
                   f"{r['date']} |")
    out.append("")
    for r in rows:
        seeds = ", ".join(map(str, r["seeds"]))
        # a colon fence: a backtick fence's info string may not hold a backtick (CommonMark),
        # so "````{dropdown} `name`" would be read as text and the rest as a code block
        out += [f":::{{dropdown}} `{r['name']}` (chapter {r['chapter']})",
                r["description"], "",
                f"**Measures:** {r['measures']}", "",
                f"**Runs:** {r['runs']} ({r['arms']} arms, seeds {seeds}), {r['wall']} of wall "
                f"time on {r['workers']} worker process{'es' if r['workers'] != 1 else ''}, "
                f"recorded {r['date']}.", "",
                f"**Run it again:** `{r['command']}`", ":::", ""]
    return "\n".join(out)
