"""Inline expressions in the prose: ``{eval}`num.slope_L``` in a markdown cell.

The chapters quote their measured numbers with MyST's ``{eval}`` role, which JupyterLab renders
with the ``jupyterlab-myst`` extension (in ``requirements.txt``): running a markdown cell
evaluates its expressions in the kernel, and the results are kept in the cell's metadata
(``user_expressions``), so a notebook opened later shows them without running anything.

:class:`ExpressionClient` is the notebook runner of ``depthnotes.tools.execute``: it runs the
code cells as nbclient does and, on reaching a markdown cell, evaluates that cell's expressions
in the same kernel, at the same point of the run, exactly as JupyterLab does, and stores the
results in the same format. The website is built without a kernel and fills the same roles
from the notebooks' glue records (``depthnotes.tools.sphinx_site``); ``publish`` writes both
from one formatted string, and ``tests/test_notebooks.py`` checks they agree.

A chapter leads with what it found: its "In short" box, at the top, quotes numbers that the
chapter computes further down. That markdown cell carries the tag ``FINDINGS_TAG``, and the
runner evaluates its expressions after the last cell, when every number exists (on the
website the glue records fill it wherever it sits; in JupyterLab it shows the stored results
until the chapter has run, and then re-running the box fills it).
"""

from __future__ import annotations

import re

from nbclient import NotebookClient

#: ``{eval}`expression``` in MyST markdown.
EVAL_ROLE = re.compile(r"\{eval\}`([^`]+)`")


def expressions(markdown: str) -> list[str]:
    """The distinct inline expressions of ``markdown``, in order of first appearance."""
    return list(dict.fromkeys(EVAL_ROLE.findall(markdown)))


class ExpressionError(RuntimeError):
    """An inline expression of the prose raised in the kernel."""


#: The tag of a markdown cell whose expressions are evaluated after the last cell.
FINDINGS_TAG = "findings"


class ExpressionClient(NotebookClient):
    """nbclient's runner, plus the markdown cells' inline expressions (see the module doc)."""

    async def async_execute_cell(self, cell, cell_index, execution_count=None,
                                 store_history=True):
        deferred = getattr(self, "_deferred", None)
        if deferred is None:
            deferred = self._deferred = []
        if cell.cell_type == "markdown" and FINDINGS_TAG in cell.metadata.get("tags", []):
            deferred.append((cell, cell_index))
            out = cell
        elif cell.cell_type != "markdown":
            out = await super().async_execute_cell(cell, cell_index, execution_count,
                                                   store_history)
        else:
            out = await self._evaluate(cell, cell_index)
        if cell_index == len(self.nb.cells) - 1:           # the last cell: the box's turn
            for box, index in deferred:
                await self._evaluate(box, index)
            deferred.clear()
        return out

    async def _evaluate(self, cell, cell_index):
        """Evaluate one markdown cell's expressions in the kernel and store the results."""
        exprs = expressions(cell.source)
        cell.metadata.pop("user_expressions", None)
        if not exprs:
            return cell
        assert self.kc is not None
        keys = {f"expr{i}": e for i, e in enumerate(exprs)}
        msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions=keys)
        reply = await self.async_wait_for_reply(msg_id, cell)
        results = reply["content"].get("user_expressions", {})
        stored = []
        for key, expr in keys.items():
            result = results.get(key, {"status": "error", "ename": "NoReply"})
            if result.get("status") != "ok":
                raise ExpressionError(f"cell {cell_index}: {{eval}}`{expr}` failed: "
                                      f"{result.get('ename')}: {result.get('evalue', '')}")
            stored.append({"expression": expr, "result": {
                "status": "ok", "data": dict(result.get("data", {})),
                "metadata": dict(result.get("metadata", {}))}})
        cell.metadata["user_expressions"] = stored
        return cell
