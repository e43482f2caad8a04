"""The command-line reference: every mode and option of ``ding``, from the parser the command itself runs.

The modes and their descriptions are :data:`ding.entry.cli.MODES`, the options the actions of
:func:`ding.entry.cli.build_parser` with their help texts, the examples its epilog; nothing is written twice.
"""

from __future__ import annotations

import argparse

from ding.entry.cli import EPILOG, MODES, build_parser
from ding_docs.rst import escaped, heading, literal, table
from ding_docs.rst import page as rst_page


def actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The parser's arguments, in the order ``ding --help`` lists them."""
    return list(parser._actions)


def argument_of(action: argparse.Action) -> str:
    """What an option takes, as ``--help`` names it (``N``, ``[DIR]``); empty for a flag and a positional argument."""
    if action.nargs == 0 or not action.option_strings:
        return ""
    name = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    return f"[{name}]" if action.nargs == "?" else name


def meaning_of(action: argparse.Action) -> str:
    """The action's help text, with its choices and, for an option that may be repeated, that it may."""
    meaning = escaped(action.help or "")
    if action.choices is not None:
        meaning += "; one of " + ", ".join(literal(str(choice)) for choice in action.choices)
    if isinstance(action, argparse._AppendAction):
        meaning += " (may be given more than once)"
    return meaning


def option_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    rows = []
    for action in actions(parser):
        names = ", ".join(literal(name) for name in action.option_strings) or literal(action.dest)
        if not action.option_strings and action.nargs == "?":
            names += " (optional, positional)"
        rows.append([names, literal(argument_of(action)), meaning_of(action)])
    return rows


def mode_rows(parser: argparse.ArgumentParser) -> list[list[str]]:
    (mode,) = [action for action in actions(parser) if "--mode" in action.option_strings]
    return [[literal(f"-m {name}"), escaped(MODES[name])] for name in mode.choices or ()]


def page_lines() -> list[str]:
    parser = build_parser()
    usage = parser.format_usage().strip()
    return [
        ".. This page is written by the docs build from ding's argument parser (docs/_ext/ding_docs).",
        "",
        *heading("Command line", "="),
        "Every mode and option of the ``ding`` command, as its argument parser declares them (``ding --help`` prints",
        "the same). A mode refuses an option it does not use, and a config's error is one ``ding: error: ...`` line",
        "(see :doc:`/generated/errors`).",
        "",
        ".. code-block:: text",
        "",
        *(f"   {line}" for line in usage.splitlines()),
        "",
        *heading("Modes", "-"),
        *table(["mode", "what it does"], mode_rows(parser), [20, 80]),
        *heading("Options", "-"),
        *table(["option", "takes", "meaning"], option_rows(parser), [20, 12, 68]),
        *heading("Examples", "-"),
        ".. code-block:: text",
        "",
        *(f"   {line}" if line else "" for line in EPILOG.splitlines()),
        "",
    ]


def page() -> str:
    return rst_page(page_lines())
