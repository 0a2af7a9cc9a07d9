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

The page shows a **row per part** (a claim, a part of a split claim, or a piece of a claim
checked in pieces): the computed word, and beside it a short finding a person wrote
(``FINDINGS``), whose numbers are filled from what the chapter published (``{name}`` is the
chapter's glued value ``name``, the same text its prose shows). The check's own printed line
stays in the chapter, one click away. Each finding records the word it was written for: when
the computed word moves, the row says so and ``tests/test_pages.py`` fails until a person
rewrites the sentence.
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
    "C5a": ("03", "Extra layers buy sequential steps: a shallow, wide model of equal size falls "
                  "short on a task of k dependent steps."),
    "C5b": ("03", "A task with k dependent steps needs roughly k layers."),
    "C5c": ("03", "Trained models use about k layers for k dependent steps (rather than the "
                  "log k that pointer doubling allows)."),
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
    pieces: list[str | None] = field(default_factory=list)   # a piece's name, or None

    def part_keys(self) -> list[str]:
        """The ``FINDINGS`` key of each printed piece: ``"C9b rates"`` for a named piece,
        ``"C1"`` for a claim in one piece, ``"X2 #1"``, ``"X2 #2"`` for unnamed pieces."""
        if len(self.verdicts) == 1 and not self.pieces[0]:
            return [self.claim]
        return [f"{self.claim} {p}" if p else f"{self.claim} #{i}"
                for i, p in enumerate(self.pieces, start=1)]

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
            result.pieces.append(piece)
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
                    other.pieces += result.pieces
                    continue
            results[cid] = result
    return results


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


@dataclass(frozen=True)
class Finding:
    """What a row of the claims page says, in a sentence a person wrote.

    ``text`` quotes the chapter's published values as ``{name}`` (filled from the notebook's
    glue records, so every number is the code's); ``part`` names the part on the page ("" for
    a claim in one piece); ``written_for`` is the outcome word the sentence was written for
    (None for a part whose word varies from run to run, such as a timing)."""

    part: str
    text: str
    written_for: str | None


_F = Finding
#: A finding per row, keyed as ``ClaimResult.part_keys`` names the rows.
FINDINGS: dict[str, Finding] = {
    "C1": _F("", "A block is {share_768} % its 12·d² matrices at d = 768 ({share_16} % at "
                 "d = 16).", REPRODUCED),
    "C2": _F("", "Counts grow with slope {slope_L} in depth and {slope_d} in width on log–log "
                 "axes; L·12·d² is within {approx_err} %.", REPRODUCED),
    "C3": _F("", "{per_block} parameters per block, {non_embedding} outside the embeddings.",
             REPRODUCED),
    "C4": _F("", "Twice as deep adds {added_depth} parameters, twice as wide {added_width}: "
                 "{ratio_added} times as many.", REPRODUCED),
    "C5a fixed width": _F("fixed width", "Blocks with which every seed did k hops at width "
                                         "64: {needed_w}.", REPRODUCED),
    "C5a equal parameters": _F("equal parameters", "At equal size the deeper shape of each "
                                                   "pair (1 vs 2, 2 vs 4, 4 vs 6 blocks at "
                                                   "k = 2, 4, 8) is clearly better.",
                               REPRODUCED),
    "C5b": _F("", "Weights set by hand do eight hops with {dbl_L8} blocks by pointer doubling; "
                  "a chain of single hops takes {relay_L8}.", CONTRADICTED),
    # neutral: the rule's reading of these numbers is the word beside it
    "C5c": _F("", "Trained on every k with {c5c_L} blocks, the seeds do {c5c_done} hops "
                  "(a relay reaches at most {c5c_relay}, doubling {c5c_doubling}).", None),
    "C6": _F("", "Growth is {c6_shape}: the second half's slope is {c6_ratio_lo}–"
                 "{c6_ratio_hi} times the first half's.", IN_PART),
    "C7": _F("", "At 100 blocks the final norm receives {c7_ratio} times the variance it gets "
                 "at 10 (seed pairs {c7_low}–{c7_high}).", REPRODUCED),
    "C8a": _F("", "Over a 96-block stack the largest per-block gradient is at most "
                  "{c8_worst_spread} times the smallest: {c8a_finding}.", NOT_SHOWN),
    "C8b Xavier": _F("Xavier", "Post-norm with the papers' Xavier init trains at L = "
                               "{c8_px_trains}, stops on some seeds at L = {c8b_mixed} and on "
                               "every seed from L = {c8b_x_depth}, where pre-norm trains.",
                     REPRODUCED),
    "C8b small init": _F("small init", "With GPT-2's small init post-norm trains at L = "
                                       "{c8_pn_trains}: past a few dozen layers.",
                         CONTRADICTED),
    "C9a two depths": _F("two depths", "Pre-norm trained in {c9_ok_pre} of {c9_cells} cells "
                                       "at 8 and 24 blocks, Xavier post-norm in {c9_ok_post}; "
                                       "in 400-step runs it ends {c9_gap48} and "
                                       "{c9_gap200} nats lower at 48 and 200 blocks, "
                                       "each arm at a judged best rate.", REPRODUCED),
    "C9a 48 blocks, Xavier": _F("48 blocks, Xavier", "Each at a best rate inside its grid, "
                                "pre-norm ends {c9x_gap} nats below Xavier post-norm (seeds "
                                "{c9x_range}), which stalls at every rate.", REPRODUCED),
    "C9a 48 blocks, GPT-2 init": _F("48 blocks, GPT-2 init", "Pre-norm with GPT-2's init ends "
                                    "{c9g_gap} nats below post-norm with N(0, 0.02²) at its "
                                    "best rate, {c9n_lr}; at the tied {c9n_lr2}, "
                                    "{c9g_verdict2}. That baseline lacks GPT-2's 1/√(2L) on "
                                    "the output projections.", REPRODUCED),
    "C9b rates": _F("rates", "At 4 blocks, without warm-up pre-norm trains up to lr "
                             "{c9s_pre_top4}, post-norm up to {c9s_post_top4}.", REPRODUCED),
    "C9b warm-up": _F("warm-up", "Warm-up raised post-norm's highest trainable rate at "
                                 "L = {c9s_needs_at} only, and not pre-norm's: "
                                 "{c9s_pre_warm_top} with it and without, below the grid's "
                                 "top, {c9s_top}.", IN_PART),
    "C10 contribution": _F("contribution", "At its best of four rates, {c10_lr}, a 48-block "
                           "pre-norm stack's late / early share is {c10_ratio} trained, "
                           "{c10_ratio_init} untrained; in {c10l_recipe} it fell from "
                           "{c10l_ratio_init} to {c10l_ratio}.", NOT_SHOWN),
    "C10 removal, against DeepNorm": _F(
        "removal, against DeepNorm",
        "On three fresh seeds removing an early DeepNorm block costs nothing clear "
        "({c10d_deep_early} nats), so its late / early ratio ({c10d_deep_ratio}) divides by "
        "noise; on seeds 0–2, read before the rule, {c10x_word}.", NOT_TESTABLE),
    "C10 removal, one-change control": _F(
        "removal, one-change control",
        "With LayerNorm Scaling, the one change meant to make deep pre-norm blocks do more, "
        "the ratio is {c10n_lns_ratio}, within noise of pre-norm's {c10n_pre_ratio}.",
        NOT_SHOWN),
    "C11": _F("", "After 100 blocks the stream's variance is {c11_scaled} times the "
                  "embedding's with 1/√(2L) branches, {c11_plain} times without.", REPRODUCED),
    "C12 update, SGD": _F("update, SGD",
                          "One SGD step of the whole model at lr {c12_sgd_lr_small} (linear "
                          "there) moves DeepNorm's final hidden state like L^k, k = "
                          "{c12_k_sgd} over {c12_Lmin}–{c12_Lmax} blocks: flat to "
                          "{c12_part_L} ({c12_k_sgd_part}), then rising to "
                          "{c12_sgd_deepest}.", CONTRADICTED),
    "C12 update, SGD, the bound's matrices": _F(
        "update, SGD, the bound's matrices",
        "Stepping only the matrices DeepNet's bound sums over (W_V, W_O, W_1, W_2), "
        "DeepNorm's update is {c12_sgdn_first} at {c12_Lmin} blocks and {c12_sgdn_last} at "
        "{c12_Lmax}, k = {c12_k_sgdn}: flat, and {c12_sgdn_post} times below Xavier "
        "post-norm's.", REPRODUCED),
    "C12 update, Adam": _F("update, Adam", "Adam's first step at a fixed rate moves it like "
                                           "L^k, k = {c12_k_adam}: every weight moves by the "
                                           "rate whatever its gradient (an extension "
                                           "beyond DeepNet's SGD analysis).",
                           CONTRADICTED),
    "C12 update, Adam at 1/√L": _F("update, Adam at 1/√L", "With Adam's rate shrinking as "
                                                           "1/√L (the book's rule, not "
                                                           "DeepNet's), k = {c12_k_scaled}.",
                                   REPRODUCED),
    "C12 depth": _F("depth", "In 400-step runs DeepNorm trains and beats Xavier post-norm "
                             "at 48 and 200 blocks.", REPRODUCED),
    "C12 1,000 blocks": _F("1,000 blocks", "With Adam's rate ∝ 1/√L and equal tokens, "
                           "DeepNorm trained on {c12w_n1000} of 3 seeds at 1,000 blocks "
                           "({c12w_loss1000}); {c12w_div} divergences, {c12w_spikes} spikes in "
                           "{c12w_runs} runs. Post-norm there ran {c12w_post_steps} warm-up "
                           "steps, {c12w_post_div} diverged: no comparison.", REPRODUCED),
    "C12 update in training": _F(
        "update in training",
        "At a rate ∝ 1/√L, DeepNorm's update at step {c12t_step} is {c12t_ratio}× smaller "
        "than post-norm's at 1,000 blocks ({c12t_ratio1}× at step 1), but grows with depth "
        "like L^k, k = {c12t_k}.", IN_PART),
    "C12 alpha only": _F("alpha only", "At 48 blocks, {c12l_steps} steps, alpha only (as "
                         "LayerNorm ignores scale, every branch times {c12a_branch}) trains "
                         "at one rate of four, {c12l_alpha_lr}: {c12l_alpha} (seeds "
                         "{c12l_alpha_range}) against Xavier post-norm's {c12l_post}; "
                         "there, against DeepNorm: {c12as_verdict}.", REPRODUCED),
    "C12 beta only": _F("beta only", "At 48 blocks, {c12l_steps} steps, beta only lets "
                        "post-norm train: {c12h_beta} against Xavier post-norm's "
                        "{c12l_post}. DeepNorm's lower {c12l_deep} is at {c12l_deep_lr}, "
                        "where beta only trained on {c12s_hi_b} of 3 seeds; at "
                        "{c12s_lo_lr} it ends {c12s_lo_below} below DeepNorm.", REPRODUCED),
    "C13 similar updates": _F("similar updates", "In the 24- and 48-block stacks, later "
                              "blocks' updates lean the way their neighbours' do (mean cosine "
                              "{c13_cos24} and {c13_cos48}; untrained at most "
                              "{c13_deep_untrained}): above untrained, as the rule asks, but far "
                              "from parallel.", REPRODUCED),
    "C13 many removable": _F("many removable", "At each stack's best rate, inside four "
                             "({c13_best_rates}), pruning without retraining removes only "
                             "{c13_prune_24} of 24 blocks, or {c13_prune_48} of 48, within 5 % "
                             "of the loss.", NOT_SHOWN),
    "C13 after healing": _F("after healing", "After {heal_steps} healing steps, "
                            "{c13_heal_kept} within 5 % of the loss; cutting half of 48 "
                            "blocks still costs {c13_heal_48} nats.", NOT_SHOWN),
    "C14 thin end": _F("thin end", "The 12-block shapes are {c14_deep_gap_small} and "
                       "{c14_deep_gap_large} nats worse than their budget's best.", REPRODUCED),
    "C14 wide end": _F("wide end", "The widest shape a budget allows (one block) is inside "
                       "the flat range; the far end, d/L ≥ {wide_extreme}, needs more "
                       "parameters.", NOT_TESTABLE),
    "C14 broad middle": _F("broad middle", "The basin holds only {c14_basin_shapes} "
                           "(d/L {basin_lo_small}–{basin_hi_small} and "
                           "{basin_lo_large}–{basin_hi_large}).", NOT_SHOWN),
    "C15": _F("", "The median d/L of {c15_n_shapes} published shapes is {c15_median_all}: "
                  "{c15_median_small} below 1B parameters, {c15_median_large} above.", IN_PART),
    "C16 #1": _F("the line", "Each block of width 512 adds {c16_b} ms per token here (R² = "
                             "{c16_r2}); the line meets L = 0 at {c16_a} ms (rounds "
                             "{c16_a_lo} to {c16_a_hi}), the head alone {c16_head_small} ms.",
                 None),
    "C16 #2": _F("the head", "Timed alone, GPT-2's 50,257-token head costs {head_ms} ms per "
                             "token ({head_layers} blocks); inside a decode step it adds about "
                             "{head_step_blocks} blocks' time. With it a block costs "
                             "{fit_big_b} ms, not {c16_b}.", None),
    "C17": _F("", "At equal parameters 12 blocks take {c17_ratio_small} times as long per "
                  "token as one; read from memory, 48 blocks take {c17_large_ratio} times as "
                  "long as 6.", None),
    "X1 cost": _F("cost", "One block applied 8 times has {x1_params_looped} parameters against "
                          "{x1_params_distinct}, and decodes a token in {x1_ms_looped} ms "
                          "against {x1_ms_distinct} for eight distinct blocks and {x1_ms_once} "
                          "for one block once.", None),
    "X1 beats one block once": _F("beats one block once", "At k = {x1_k}, each at its best "
                                  "rate, one block applied {x1_loops} times answers "
                                  "{x1_acc_looped} of the queries, one block once "
                                  "{x1_acc_once}.", REPRODUCED),
    "X1 matches distinct blocks": _F("matches distinct blocks", "{x1_loops} distinct blocks "
                                     "answer {x1_acc_distinct} at their best rate, the looped "
                                     "block {x1_acc_looped}: clearly short.", CONTRADICTED),
    "X2 #1": _F("one step", "One Adam step moves the stream like L^{x2_exp_std} without a "
                            "rule, L^{x2_exp_inv} with 1/L branches.", REPRODUCED),
    "X2 #2": _F("learning rate", "Reusing 4 blocks' best rate at 64 costs {x2_cost_std_64} "
                                 "nats without a rule, {x2_cost_sqrt_64} with 1/√L branches, "
                                 "{x2_cost_inv_64} with 1/L, {x2_cost_mup_64} with Depth-µP's "
                                 "pairing (1/√L branches, blocks' rate ∝ 1/√L).", REPRODUCED),
    "X3 at initialisation": _F("at initialisation", "24 blocks add {x3_init_ratio} times "
                               "less variance with LayerNorm Scaling.", REPRODUCED),
    "X3 deep layers": _F("deep layers", "After training, the scaling changes what removing a "
                         "deep-half block costs by {x3_deep_gap} nats: the deep half is worth "
                         "less, not more.", CONTRADICTED),
    "X3 loss": _F("loss", "The scaling changes the validation loss by {x3_loss_gap} nats "
                          "({x3_loss_seen}).", NOT_SHOWN),
}


class _Published(dict):
    def __init__(self, values: dict, key: str, notebook: str):
        super().__init__(values)
        self.key, self.notebook = key, notebook

    def __missing__(self, name: str) -> str:
        raise ClaimFormatError(f"the finding for {self.key} quotes {{{name}}}, which "
                               f"{self.notebook} does not publish (depthnotes.tools.claims."
                               "FINDINGS: quote a name the chapter publishes)")


def finding_text(key: str, finding: Finding, notebook: Path) -> str:
    """``finding``'s sentence with the chapter's published values filled in."""
    from depthnotes.tools.sphinx_site import glued_texts

    return finding.text.format_map(_Published(glued_texts(notebook), key, notebook.name))


def stale_findings(root: Path, findings: dict[str, Finding] | None = None) -> list[str]:
    """Rows whose computed word is not the word their finding was written for, and rows with
    no finding: each must be (re)written by a person."""
    findings = FINDINGS if findings is None else findings
    out = []
    for r in collect_claims(root).values():
        for key, word in zip(r.part_keys(), r.verdicts):
            f = findings.get(key)
            if f is None:
                out.append(f"{key}: no finding written (add one to FINDINGS)")
            elif f.written_for is not None and f.written_for != word:
                out.append(f"{key}: written for '{f.written_for}', the check now says "
                           f"'{word}'")
    return out


# Symbols from the fonts every system has (DejaVu, Arial): emoji are boxes where no emoji font is.
_SYMBOL = {REPRODUCED: "(✓)", IN_PART: "(◐)", CONTRADICTED: "(✗)", NOT_SHOWN: "(○)",
           NOT_TESTABLE: "(?)"}
_BADGE = {**{v: f"{_SYMBOL[v][1:-1]} {v}" for v in VERDICTS}, None: "not yet checked"}


def render_claims_table(root: Path, findings: dict[str, Finding] | None = None) -> str:
    """The MyST fragment ``book/claims.md`` includes: a summary line and a row per part."""
    findings = FINDINGS if findings is None else findings
    results = collect_claims(root)
    parts = [(cid, key, word) for cid, r in results.items()
             for key, word in zip(r.part_keys(), r.verdicts)]
    counts = {v: sum(word == v for _, _, word in parts) for v in VERDICTS}
    missing = [c for c in CLAIMS if c not in results]
    n_claims = len({re.sub(r"[a-z]$", "", c) for c in CLAIMS})
    lines = [
        "<!-- generated by depthnotes.tools.build from the notebooks; do not edit -->",
        "",
        f"{n_claims} claims in {len(parts) + len(missing)} rows (a claim with independent "
        "parts, or checked in pieces, has a row for each). Of the rows, "
        + ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS)
        + (f", and **{len(missing)}** not yet checked (their chapters are still being written)."
           if missing else "."),
        "",
        "| claim | outcome | what we found | check |",
        "|-------|---------|---------------|-------|",
    ]
    for cid, (chapter, statement) in CLAIMS.items():
        r = results.get(cid)
        head = f"**{cid}** {_cell(statement)}"
        if r is None:
            lines.append(f"| {head} | {_BADGE[None]} | (chapter {int(chapter)}) | — |")
            continue
        notebook = next(p for p in toc_notebooks(root) if p.stem == r.notebook)
        for i, (key, word) in enumerate(zip(r.part_keys(), r.verdicts)):
            f = findings.get(key)
            if f is None:
                piece = key.split(" ", 1)[1] if " " in key else ""
                part = "" if piece.startswith("#") else piece
                text = "(no finding written yet: see the check)"
            else:
                part, text = f.part, finding_text(key, f, notebook)
                if f.written_for is not None and f.written_for != word:
                    text += (f" (written when the word was *{f.written_for}*: see the check "
                             "for the current result)")
            link = f"{{ref}}`{cid} <{r.label}>`" if i == 0 else ""
            found = f"*{_cell(part)}:* {_cell(text)}" if part else _cell(text)
            lines.append(f"| {head if i == 0 else ''} | {_BADGE[word]} | {found} | {link} |")
    return "\n".join(lines) + "\n"
