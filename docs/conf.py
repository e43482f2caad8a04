"""Sphinx configuration of ding's documentation: Furo, MyST pages, autodoc of the docstrings, and the pages the build
generates from the code (the config reference, the wrapper catalogue)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

project = "ding"
author = "ding contributors"
copyright = "ding contributors, Apache-2.0"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.doctest",
    "sphinx_autodoc_typehints",
    "ding_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
root_doc = "index"

html_theme = "furo"
html_title = "ding"

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 4

autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "description"
autodoc_preserve_defaults = True
typehints_fully_qualified = False
always_document_param_types = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# ``sphinx-build -b doctest`` runs the pages' ``{doctest}`` blocks; the docstrings' examples shown by autodoc are
# pytest's (``--doctest-modules``), so plain ``>>>`` blocks are not run twice.
doctest_test_doctest_blocks = ""

# Methods that override a gymnasium method without a docstring of their own are not given gymnasium's.
autodoc_inherit_docstrings = False
# Names imported only for type checking (``SerialRun`` in the pipelines' annotations) stay unresolved.
suppress_warnings = ["sphinx_autodoc_typehints.forward_reference"]
warnings.filterwarnings("ignore", message=".*set_application.*is deprecated", module="sphinx_autodoc_typehints")
