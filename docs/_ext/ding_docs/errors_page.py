"""The errors page: every exception class of :mod:`ding.errors`, its bases and what it means.

The classes are those the module defines, in its order; a class's meaning is the first paragraph of its docstring.
"""

from __future__ import annotations

import inspect

import ding.errors
from ding_docs.rst import heading, literal
from ding_docs.rst import page as rst_page

MODULE = ding.errors


def error_classes() -> list[type[BaseException]]:
    """The public exception classes :mod:`ding.errors` defines, in the order it defines them."""
    return [
        value
        for name, value in vars(MODULE).items()
        if not name.startswith("_")
        and inspect.isclass(value)
        and issubclass(value, BaseException)
        and value.__module__ == MODULE.__name__
    ]


def base_name(cls: type) -> str:
    return cls.__qualname__ if cls.__module__ in (MODULE.__name__, "builtins") else f"{cls.__module__}.{cls.__name__}"


def tree_lines(root: type[BaseException], classes: list[type[BaseException]], depth: int = 0) -> list[str]:
    """``root`` and the classes below it, indented by depth, a class with several parents under each."""
    lines = [f"{'    ' * depth}{root.__qualname__}"]
    for cls in classes:
        if root in cls.__bases__:
            lines += tree_lines(cls, classes, depth + 1)
    return lines


def first_paragraph(cls: type) -> str:
    return (inspect.getdoc(cls) or "").split("\n\n")[0]


def page_lines() -> list[str]:
    classes = error_classes()
    roots = [cls for cls in classes if not any(base in classes for base in cls.__bases__)]
    lines = [
        ".. This page is written by the docs build from ding.errors (docs/_ext/ding_docs).",
        "",
        *heading("Errors", "="),
        "Every error a user can provoke is one of these classes of ``ding.errors``: each derives from ``DingError``",
        "and from the builtin exception that describes it best, so a caller may catch either. The ``ding`` command",
        "prints one as a single ``ding: error: ...`` line.",
        "",
        ".. code-block:: text",
        "",
        *(f"   {line}" for root in roots for line in tree_lines(root, classes)),
        "",
    ]
    for cls in classes:
        lines += heading(cls.__qualname__, "-")
        bases = ", ".join(literal(base_name(base)) for base in cls.__bases__)
        lines += [f"``ding.errors.{cls.__qualname__}`` (bases: {bases})", "", first_paragraph(cls), ""]
    return lines


def page() -> str:
    return rst_page(page_lines())
