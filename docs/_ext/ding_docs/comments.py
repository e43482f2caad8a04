"""What a config key means, read from the comment written beside it where it is declared.

ding's declared configs say a key's meaning in a comment on the key's line (``"nstep": count(1),  # ...``) or on
the lines just above it. :class:`KeyComments` looks a key up in the modules of the component that declares it
first, then in every module of ding where that key's comment is the same wherever it is written, then in the
glossary (:mod:`ding_docs.glossary`).
"""

from __future__ import annotations

import functools
import inspect
import io
import sys
import tokenize
import types
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ding
from ding_docs.glossary import meaning_of

SKIPPED = ("noqa", "type:", "pragma", "fmt:")


@functools.cache
def module_comments(path: Path) -> dict[str, str]:
    """Each dict key of the module at ``path`` that has a comment beside it or just above it, and that comment."""
    source = path.read_text(encoding="utf-8")
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    trailing: dict[int, str] = {}
    alone: dict[int, str] = {}
    code_lines: set[int] = set()
    for token in tokens:
        if token.type == tokenize.COMMENT:
            text = token.string.lstrip("#").strip()
            if token.line.strip().startswith("#"):
                alone[token.start[0]] = text
            else:
                trailing[token.start[0]] = text
        elif token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_lines.add(token.start[0])
    found: dict[str, str] = {}
    code = [t for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE)]
    for before, token, after in zip(code, code[1:], code[2:], strict=False):
        if token.type != tokenize.STRING or after.string != ":" or before.string not in ("{", ","):
            continue
        key = token.string.strip("\"'")
        line = token.start[0]
        above: list[str] = []
        while line - 1 - len(above) in alone:
            above.insert(0, alone[line - 1 - len(above)])
        text = trailing.get(line) or " ".join(above)
        if text and not text.startswith(SKIPPED) and key not in found:
            found[key] = text
    return found


@functools.cache
def unambiguous_comments() -> dict[str, str]:
    """Keys whose comment is the same in every module of ding that comments them."""
    seen: dict[str, set[str]] = {}
    for path in sorted(Path(ding.__file__).parent.rglob("*.py")):
        for key, text in module_comments(path).items():
            seen.setdefault(key, set()).add(text)
    return {key: texts.pop() for key, texts in seen.items() if len(texts) == 1}


class KeyComments:
    """The comments of the modules of one component, then ding's unambiguous ones."""

    def __init__(self, paths: Iterable[Path]) -> None:
        self.paths = list(paths)

    @classmethod
    def for_owner(cls, owner: Any) -> KeyComments:
        """For a class (its module and its bases' modules) or a module."""
        modules: list[types.ModuleType] = []
        if isinstance(owner, types.ModuleType):
            modules.append(owner)
        else:
            modules += [sys.modules[klass.__module__] for klass in inspect.getmro(owner) if klass is not object]
        paths = [Path(m.__file__) for m in modules if m.__file__]
        return cls(dict.fromkeys(paths))

    def meaning(self, key_path: str, note: str | None) -> str:
        """``note`` when the declaration gives one, else the comment beside the key, else the glossary's."""
        if note:
            return note
        key = key_path.rsplit(".", 1)[-1]
        for path in self.paths:
            if key in module_comments(path):
                return module_comments(path)[key]
        return unambiguous_comments().get(key) or meaning_of(key_path)
