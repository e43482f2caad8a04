"""Registry: strict lookups, aliases that resolve to the registered name, and the unknown-name message."""

from __future__ import annotations

import pytest

from ding.errors import UnknownNameError
from ding.utils.registry import Registry


def _registry() -> Registry[type]:
    reg: Registry[type] = Registry("widget", alias_kind="class names")

    @reg.register("frame_stack")
    class FrameStacker:
        def __init__(self, n: int = 4) -> None:
            self.n = n

    @reg.register("warp_frame")
    class Warper: ...

    return reg


def test_aliases_resolve_to_the_registered_name() -> None:
    reg = _registry()
    reg.add_alias("FrameStack", "frame_stack")
    reg.add_alias("FrameStack", "frame_stack")  # the same alias again is harmless
    assert reg.canonical("FrameStack") == reg.canonical("frame_stack") == "frame_stack"
    assert reg.get("FrameStack") is reg.get("frame_stack")
    assert "FrameStack" in reg and "frame_stack" in reg and "Nope" not in reg
    assert list(reg) == ["frame_stack", "warp_frame"] and len(reg) == 2  # iteration: registered names only
    assert reg.aliases() == {"FrameStack": "frame_stack"}
    assert reg.build("FrameStack", n=2).n == 2


def test_alias_conflicts_are_errors() -> None:
    reg = _registry()
    reg.add_alias("Stack", "frame_stack")
    with pytest.raises(ValueError, match=r"alias 'Stack' already stands for 'frame_stack', not 'warp_frame'"):
        reg.add_alias("Stack", "warp_frame")
    with pytest.raises(ValueError, match=r"alias 'warp_frame' would shadow the registered widget 'warp_frame'"):
        reg.add_alias("warp_frame", "frame_stack")
    with pytest.raises(UnknownNameError, match=r"unknown widget 'nope'; known: frame_stack, warp_frame"):
        reg.add_alias("Nope", "nope")
    with pytest.raises(ValueError, match=r"widget name 'Stack' is already an alias of 'frame_stack'"):
        reg.register("Stack")(type("Other", (), {}))


def test_unknown_names_list_registered_names_mention_aliases_and_match_either() -> None:
    reg = _registry()
    with pytest.raises(UnknownNameError, match=r"^unknown widget 'frame_stak'; known: frame_stack, warp_frame\. Did"):
        reg.get("frame_stak")  # no aliases yet: the plain message
    reg.add_alias("WarpFrame", "warp_frame")
    with pytest.raises(
        UnknownNameError,
        match=r"^unknown widget 'WarpFrme'; known: frame_stack, warp_frame\. Class names work too "
        r"\(e\.g\. 'WarpFrame'\)\. Did you mean 'WarpFrame'\?$",
    ):
        reg.canonical("WarpFrme")
    with pytest.raises(UnknownNameError, match=r"Did you mean 'frame_stack'\?$"):
        reg.get("frame_stak")
    with pytest.raises(UnknownNameError, match=r"unknown widget \['frame_stack'\]"):
        reg.get(["frame_stack"])  # type: ignore[arg-type]


def test_unregister_drops_the_aliases() -> None:
    reg = _registry()
    reg.add_alias("FrameStack", "frame_stack")
    cls = reg.unregister("FrameStack")
    assert cls.__name__ == "FrameStacker"
    assert "frame_stack" not in reg and "FrameStack" not in reg and reg.aliases() == {}
    assert reg.is_free("FrameStack")
