"""Sphinx extension for ding's documentation: the pages the build generates from the code.

Before the sources are read, :func:`write_generated_pages` writes ``docs/generated/``: the config reference (every
key of the declared defaults, :mod:`ding_docs.config_reference`), the wrapper catalogue (every registered wrapper
with its rule, keyword arguments and an example the build runs, :mod:`ding_docs.wrapper_catalogue`), the command
line (every mode and option of ``ding``'s parser, :mod:`ding_docs.cli_reference`), the errors (every exception class
of :mod:`ding.errors`, :mod:`ding_docs.errors_page`) and the API reference (autodoc of each public package's exports,
:mod:`ding_docs.api`). A page is rewritten only when its text changes, so an unchanged build reads nothing again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from ding_docs import api, cli_reference, config_reference, errors_page, wrapper_catalogue

GENERATED = "generated"
"""The folder of ``docs/`` the generated pages go to (not in the repository)."""


def generated_pages() -> dict[str, str]:
    """Every generated page: its path under ``docs/generated/`` and its reStructuredText."""
    return {
        "config_reference.rst": config_reference.page(),
        "wrappers.rst": wrapper_catalogue.page(),
        "cli.rst": cli_reference.page(),
        "errors.rst": errors_page.page(),
        **{f"api/{name}.rst": text for name, text in api.pages().items()},
    }


def write_generated_pages(app: Sphinx) -> None:
    root = Path(app.srcdir) / GENERATED
    for relative, text in generated_pages().items():
        path = root / relative
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", write_generated_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
