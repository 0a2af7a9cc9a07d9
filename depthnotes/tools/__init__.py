"""Tooling for the book itself: re-executing notebooks in place, building the site.

Run as modules, e.g. ``python -m depthnotes.tools.execute notebooks/01_parameter_math.ipynb``.
Nothing in the core package imports from here. One job per module:

* ``book`` — the book's layout: its root, the notebooks ``_toc.yml`` lists, a notebook's title;
* ``assets`` — the pinned npm scripts the offline site serves itself, and their fetch;
* ``claims``, ``status``, ``summaries``, ``api_page``, ``landing`` — the generated page
  fragments (and the landing page's figure);
* ``reading`` — how much a reader reads: a chapter's visible words;
* ``build`` — the site (assets, generated pages, Jupyter Book); ``execute`` — re-run notebooks;
  ``student`` — the student version; ``sphinx_site`` — the site's Sphinx fixes;
  ``pytest_plugin`` — the test run's hooks (timings for the status page).

No module imports one that imports it back, also counting imports inside functions;
``tests/test_imports.py`` keeps it so. Their third-party needs (nbformat, PyYAML, docutils,
nbclient) are imported where used and declared in pyproject's ``book`` extra.
"""
