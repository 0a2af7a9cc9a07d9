"""How much a reader reads: a chapter's visible words, counted from the notebook file.

The findings-first shape puts a chapter's rules, seeds, grids and records in folds
("How we judged this" dropdowns) and hides its plumbing cells, so that the text a reader
meets on the way through is short. This module counts that text, the same way for every
chapter, without building the site:

* only **markdown cells** count (code is read differently, and its lines are held to the
  column by their own test); a markdown cell tagged ``remove-cell``, ``hide-cell`` or
  ``remove-input`` is not visible and does not count;
* inside a cell, everything between a **fold's** opening and closing fence is left out: a
  MyST directive named ``dropdown`` or ``toggle``, or any directive given the ``dropdown``
  class (``:class: dropdown``), with colon (``:::``) or backtick (`````` ``` ``````) fences,
  nested folds included;
* the fences of other directives (``:::{admonition} In short``, ``:::{note}``) and their
  option lines (``:class: tip``), MyST labels (``(claim-c16)=``) and HTML comments are markup,
  not words; the words inside those directives are counted;
* a **word** is a whitespace-separated token with at least one letter or digit in it, after
  each inline role (``{eval}`num.c16_b```, ``{ref}`methods```) is replaced by one word:
  a published number renders as one number, a reference as its (short) link text.

``visible_words`` gives the total; ``words_before_first_fold`` the words a reader meets
before the first fold (in notebook order).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

#: Cell tags that keep a markdown cell off the page.
HIDDEN_TAGS = frozenset({"remove-cell", "hide-cell", "remove-input"})
#: Directives that are folds: their body is one click away.
FOLD_DIRECTIVES = frozenset({"dropdown", "toggle"})

_FENCE = re.compile(r"^(\s*)(:{3,}|`{3,}|~{3,})\s*(\{([\w-]+)\})?(.*)$")
_OPTION = re.compile(r"^\s*:[\w-]+:(\s|$)")
_LABEL = re.compile(r"^\s*\([\w:.-]+\)=\s*$")
_ROLE = re.compile(r"\{[\w:-]+\}`[^`]*`")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_WORD = re.compile(r"[A-Za-z0-9]")


def _cell_text(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _is_visible_markdown(cell: dict) -> bool:
    tags = set(cell.get("metadata", {}).get("tags", []))
    return cell.get("cell_type") == "markdown" and not (tags & HIDDEN_TAGS)


def split_markdown(text: str) -> list[tuple[bool, str, bool]]:
    """The lines of one markdown cell that hold words: ``(inside a fold, line, opens a fold)``.

    A fold's title line (what the closed dropdown shows) is not inside it, and opens it.
    Fence lines, directive options, labels and comments are dropped. A fence closes the
    innermost open fence of the same character and at least its length (MyST's rule)."""
    text = _COMMENT.sub(" ", text)
    stack: list[list] = []                  # [fence char, length, opens a fold, title index]
    out: list[tuple[bool, str, bool]] = []
    just_opened = False
    for line in text.splitlines():
        folded = any(f[2] for f in stack)
        m = _FENCE.match(line)
        if m:
            marks, name, rest = m.group(2), m.group(4), m.group(5).strip()
            char, length = marks[0], len(marks)
            closes = (stack and not name and not rest and char == stack[-1][0]
                      and length >= stack[-1][1])
            if closes:
                stack.pop()
                just_opened = False
                continue
            if name or not stack or char != stack[-1][0]:
                fold = name in FOLD_DIRECTIVES
                title = None
                if rest and name:              # the directive's title line
                    title = len(out)
                    out.append((folded, rest, fold and not folded))
                elif fold and not folded:      # an untitled fold still shows a toggle
                    title = len(out)
                    out.append((folded, "", True))
                stack.append([char, length, fold, title])
                just_opened = True
                continue
        if just_opened and _OPTION.match(line):
            if re.match(r"^\s*:class:.*\bdropdown\b", line) and stack and not stack[-1][2]:
                stack[-1][2] = True
                if not folded:
                    if stack[-1][3] is None:
                        stack[-1][3] = len(out)
                        out.append((False, "", True))
                    else:
                        i = stack[-1][3]
                        out[i] = (out[i][0], out[i][1], True)
            continue
        just_opened = False
        if _LABEL.match(line) or not line.strip():
            continue
        out.append((any(f[2] for f in stack), line, False))
    return out


def count_words(line: str) -> int:
    """Words in one line of markdown (inline roles count as one word each)."""
    line = _ROLE.sub(" N ", line)
    return sum(1 for tok in line.split() if _WORD.search(tok))


def markdown_words(text: str) -> tuple[int, int, bool]:
    """(words outside folds, words inside folds, whether the cell opens a fold) of one cell.

    A fold's title (the dropdown's summary line, which the reader sees) counts as visible."""
    shown = folded = 0
    has_fold = False
    for inside, line, opens in split_markdown(text):
        n = count_words(line)
        has_fold = has_fold or opens
        if inside:
            folded += n
        else:
            shown += n
    return shown, folded, has_fold


def chapter_reading(nb: dict) -> dict:
    """Visible words of a notebook (dict as read from JSON): ``total``, ``before_first_fold``
    (the words a reader meets before the first fold's title), ``folded`` (words a reader opens
    a fold to see)."""
    total = folded = before = 0
    seen_fold = False
    for cell in nb.get("cells", []):
        if not _is_visible_markdown(cell):
            continue
        for inside, line, opens in split_markdown(_cell_text(cell)):
            seen_fold = seen_fold or opens
            n = count_words(line)
            if inside:
                folded += n
                continue
            total += n
            if not seen_fold:
                before += n
    return {"total": total, "before_first_fold": before, "folded": folded}


def notebook_reading(path: str | Path) -> dict:
    return chapter_reading(json.loads(Path(path).read_text(encoding="utf-8")))


def main() -> None:                                            # pragma: no cover - a report
    from depthnotes.tools.book import ROOT as root

    print(f"{'chapter':32s} {'visible':>8s} {'before fold':>12s} {'folded':>8s}")
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        r = notebook_reading(path)
        print(f"{path.name:32s} {r['total']:8d} {r['before_first_fold']:12d} {r['folded']:8d}")


if __name__ == "__main__":                                     # pragma: no cover
    main()
