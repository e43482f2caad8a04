"""Small writers of reStructuredText for the generated pages."""

from __future__ import annotations

from collections.abc import Sequence


def literal(value: str) -> str:
    """``value`` as inline code (empty text stays empty)."""
    if not value:
        return ""
    return f"``{value}``" if "``" not in value and not value.endswith("`") else f":code:`{value}`"


SPECIAL = "\\*`_|-'\""
"""Characters reStructuredText (or its smart quotes, for ``-`` and quotes) would read as markup."""


def escaped(value: str) -> str:
    """``value`` as plain text: no character of it read as markup, ``--check`` kept as two hyphens.

    >>> print(escaped("--video [DIR] writes *.mp4"))
    \\-\\-video [DIR] writes \\*.mp4
    """
    return "".join(f"\\{char}" if char in SPECIAL else char for char in value)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int] | None = None) -> list[str]:
    """A list-table with ``header`` and ``rows`` of inline reStructuredText cells."""
    lines = [".. list-table::", "   :header-rows: 1"]
    if widths:
        lines.append(f"   :widths: {' '.join(map(str, widths))}")
    lines.append("")
    for row in (header, *rows):
        lines.append(f"   * - {row[0] or ' '}")
        lines += [f"     - {cell or ' '}" for cell in row[1:]]
    return [*lines, ""]


def heading(text: str, underline: str) -> list[str]:
    """A section title; the page title uses ``=``, its sections ``-``, theirs ``~``."""
    return [text, underline * len(text), ""]


def page(lines: Sequence[str]) -> str:
    return "\n".join(lines).rstrip() + "\n"
