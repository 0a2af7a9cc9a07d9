"""The claims table, read from the notebooks' claim-check cells (so it never drifts).

A claim check in a notebook is a markdown cell that starts with a label and a heading,

    (claim-c6)=
    ### Check C6: ...

followed by a code cell containing ``# Claim C6`` and an ``assert``, whose stored output has
a line ``Claim C6 — <verdict>: <what was measured>``; the verdict is one of
``VERDICTS`` (the evidence library's outcome words). :func:`collect_claims` reads those lines from the notebooks the book's table of
contents includes; :func:`render_claims_table` writes the MyST table that ``book/claims.md``
includes, with a row for every entry of ``CLAIMS`` (``not yet checked`` where no chapter checks
it yet): the article's claims C1–C17 and the extension's X1–X3 (chapter 8), results that came
after the article.

A claim that makes two independent statements, each with its own check and its own verdict, is
split into parts with a letter (``C8a``, ``C8b``; labels ``claim-c8a``, ``claim-c8b``): each
part is an entry of ``CLAIMS`` and gets its own row, so a good verdict on one half is not hidden
behind the other's. A claim checked in pieces within one entry prints a line per piece, the
piece named in brackets (``Claim C9 (depth) — ...``, ``Claim C9 (recipe) — ...``); the table
shows each piece's word, and the row's headline combines them (``evidence.combine``: never
simply the worst of several).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from depthnotes.tools.book import toc_notebooks
from depthnotes.verdicts.evidence import (CONTRADICTED, IN_PART, NOT_SHOWN, NOT_TESTABLE,
                                          OUTCOMES, REPRODUCED, combine)

#: The verdict words: the evidence library's outcome words.
VERDICTS = OUTCOMES

#: Each claim in the book's own words, and the chapter (notebook number) meant to check it.
CLAIMS: dict[str, tuple[str, str]] = {
    "C1": ("01", "A block costs about 12·d² parameters: 4·d² in attention, 8·d² in a 4d-wide FFN."),
    "C2": ("01", "Parameters outside the embeddings scale as L·12·d²: linearly in depth, "
                 "quadratically in width."),
    "C3": ("02", "GPT-2 small (d = 768, L = 12) has about 7.08M parameters per block and 85M "
                 "outside the embeddings."),
    "C4": ("02", "Doubling GPT-2 small's depth adds about 85M parameters; doubling its width adds "
                 "about 255M."),
    "C5": ("03", "Extra layers buy sequential steps: a task with k dependent steps needs roughly "
                 "k layers, and a wide shallow model of equal size falls short."),
    "C6": ("04", "In an untrained residual stack the variance of the stream grows about linearly "
                 "with the layer index."),
    "C7": ("04", "At 100 layers the final norm receives a signal about ten times larger in "
                 "variance than at 10 layers."),
    "C8a": ("04", "Gradients shrink or blow up across a deep stack."),
    "C8b": ("04", "Plain post-norm stops training beyond a few dozen layers."),
    "C9a": ("05", "Pre-norm keeps a clean identity path, so the first layers get full-size "
                  "gradients and deep stacks train stably."),
    "C9b": ("05", "Pre-norm tolerates higher learning rates and less warm-up than post-norm."),
    "C10": ("05", "In a pre-norm model the deepest layers can end up contributing little."),
    "C11": ("05", "Scaling each residual branch by 1/√(2L) (or GPT-2's smaller init of the output "
                  "projections) keeps the total variance near one, so the model starts close to "
                  "the identity."),
    "C12": ("05", "DeepNorm (up-weighted residual, down-scaled init) bounds the size of each update "
                  "and lets very deep post-norm stacks train where plain post-norm diverges."),
    "C13": ("06", "Deep layers become redundant: neighbours make similar, small updates, and many "
                  "can be removed at little cost in loss."),
    "C14": ("06", "At a fixed parameter budget the loss is nearly flat across a wide middle range "
                  "of shapes and worse at both extremes."),
    "C15": ("06", "Well-working models have a width-to-depth ratio d/L of the order of 100."),
    "C16": ("07", "Layers run one after another, so time per generated token grows about "
                  "linearly with depth."),
    "C17": ("07", "At equal parameter count, a shallower and wider model generates tokens faster "
                  "on a CPU."),
    # the extension (chapter 8): results that came after the article
    "X1": ("08", "One block applied n times (looped, weight-shared) stands in for n distinct blocks "
                 "on a multi-step task, with the parameters of one block and the decode latency "
                 "of n."),
    "X2": ("08", "Scaling each residual branch by 1/√L (Depth-µP) or 1/L (CompleteP) keeps the best "
                 "learning rate in place as depth grows; the standard parameterisation's moves."),
    "X3": ("08", "LayerNorm Scaling (each block's LayerNorm output × 1/√l) curbs the growth of "
                 "pre-norm's residual variance and makes the deep layers more useful."),
}

#: A claim ID: C (the article's) or X (the extension's) and a number, and a letter for one
#: part of a claim that is split (C8a).
_ID = r"[CX]\d+[a-z]?"
#: A result line, with an optional piece name in brackets for a claim checked in pieces
#: ("Claim C9 (depth) — ..."): the piece's name is kept in front of what it measured.
_RESULT = re.compile(r"^Claim (" + _ID + r")(?: \(([^)]+)\))? — ("
                     + "|".join(sorted(VERDICTS, key=len, reverse=True)) + r"): (.+)$")
_ANY_CLAIM_LINE = re.compile(r"^Claim (" + _ID + r")\b")
_TAG = re.compile(r"#\s*Claim (" + _ID + r")\b")
_LABEL = re.compile(r"^\((claim-[cx]\d+[a-z]?)\)=\s*$", re.MULTILINE)


class ClaimFormatError(ValueError):
    """A claim cell breaks the house format; the message names the notebook and the cell."""


@dataclass
class ClaimResult:
    claim: str                      # "C6", or "C8a" for a part of a split claim
    notebook: str                   # "04_instability" (docname without the folder)
    label: str                      # "claim-c6", "claim-c8a"
    verdicts: list[str] = field(default_factory=list)
    measured: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """The headline word of the claim's pieces (``evidence.combine``)."""
        return combine(self.verdicts)


def _text_outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
    return "".join(parts)


def claims_in_notebook(path: Path) -> dict[str, ClaimResult]:
    """The claim results stored in one notebook, keyed by claim ID."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    found: dict[str, ClaimResult] = {}
    all_labels = {label for cell in nb.cells if cell.cell_type == "markdown"
                  for label in _LABEL.findall(cell.source)}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        where = f"{path.name}, cell {index}"
        tags = set(_TAG.findall(cell.source))
        lines = [ln for ln in _text_outputs(cell).splitlines() if _ANY_CLAIM_LINE.match(ln)]
        if not tags and not lines:
            continue
        if tags and not lines:
            raise ClaimFormatError(f"{where}: the cell marks {sorted(tags)} but its stored output "
                                   "has no line 'Claim Cn — <verdict>: ...' (run the notebook?)")
        for line in lines:
            m = _RESULT.match(line.strip())
            if not m:
                raise ClaimFormatError(
                    f"{where}: {line!r} is not 'Claim Cn — <verdict>: <measured>' with a verdict "
                    f"in {list(VERDICTS)}")
            cid, piece, verdict, measured = m.groups()
            measured = f"{piece}: {measured.strip()}" if piece else measured
            if cid not in CLAIMS:
                raise ClaimFormatError(f"{where}: unknown claim {cid} (known: "
                                       f"{', '.join(CLAIMS)})")
            label = f"claim-{cid.lower()}"
            if label not in all_labels:
                raise ClaimFormatError(f"{where}: no markdown label '({label})=' for {cid}; put it "
                                       "with a '### Check ...' heading above the check cell")
            result = found.setdefault(cid, ClaimResult(cid, path.stem, label))
            result.verdicts.append(verdict)
            result.measured.append(measured.strip())
    return found


def collect_claims(root: Path) -> dict[str, ClaimResult]:
    """Every claim result in the book's notebooks (those in ``_toc.yml``)."""
    results: dict[str, ClaimResult] = {}
    for path in toc_notebooks(root):
        for cid, result in claims_in_notebook(path).items():
            if cid in results:
                other = results[cid]
                if other.notebook != result.notebook:
                    # checked in two chapters: keep both pieces, link the first chapter
                    other.verdicts += result.verdicts
                    other.measured += result.measured
                    continue
            results[cid] = result
    return results


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# Symbols from the fonts every system has (DejaVu, Arial): emoji are boxes where no emoji font is.
_SYMBOL = {REPRODUCED: "(✓)", IN_PART: "(◐)", CONTRADICTED: "(✗)", NOT_SHOWN: "(○)",
           NOT_TESTABLE: "(?)"}
_BADGE = {**{v: f"{_SYMBOL[v][1:-1]} {v}" for v in VERDICTS}, None: "not yet checked"}


def render_claims_table(root: Path) -> str:
    """The MyST fragment ``book/claims.md`` includes: a summary line and one row per claim."""
    results = collect_claims(root)
    counts = {v: sum(r.verdict == v for r in results.values()) for v in VERDICTS}
    missing = [c for c in CLAIMS if c not in results]
    n_claims = len({re.sub(r"[a-z]$", "", c) for c in CLAIMS})
    rows = (f"{len(CLAIMS)} rows for {n_claims} claims (a claim in independent parts has a "
            f"row for each)" if len(CLAIMS) != n_claims else f"{n_claims} claims")
    lines = [
        "<!-- generated by depthnotes.tools.build from the notebooks; do not edit -->",
        "",
        f"Of {rows}, " + ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS)
        + (f", and **{len(missing)}** not yet checked (their chapters are still being written)."
           if missing else "."),
        "",
        "| ID | claim | verdict | what the check measured | check |",
        "|----|-------|---------|-------------------------|-------|",
    ]
    for cid, (chapter, statement) in CLAIMS.items():
        r = results.get(cid)
        if r is None:
            lines.append(f"| {cid} | {_cell(statement)} | {_BADGE[None]} | "
                         f"(chapter {int(chapter)}) | — |")
        else:
            if len(set(r.verdicts)) > 1:     # pieces disagree: say which piece got which
                measured = "; ".join(f"{_SYMBOL[v]} {_cell(m)}"
                                     for v, m in zip(r.verdicts, r.measured))
            else:
                measured = "; ".join(_cell(m) for m in r.measured)
            lines.append(f"| {cid} | {_cell(statement)} | {_BADGE[r.verdict]} | {measured} | "
                         f"{{ref}}`{cid} <{r.label}>` |")
    return "\n".join(lines) + "\n"
