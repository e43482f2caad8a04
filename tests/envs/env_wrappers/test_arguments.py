"""Wrapper keyword arguments checked against their annotations; rules and their placeholders."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_wrappers.arguments import (
    NonNegativeFloat,
    NonNegativeInt,
    PositiveInt,
    UnitFloat,
    check_argument,
    describe,
    rule_parameters,
)
from ding.envs.env_wrappers.fields import Fields
from ding.envs.env_wrappers.rule import SpaceKindError, describe_space, require_box
from ding.envs.values.spaces import is_placeholder, shape_to_space
from ding.errors import ConfigError, ShapeRuleError


@pytest.mark.parametrize(
    ("annotation", "value", "expected"),
    [
        (bool, np.bool_(True), True),
        (int, np.int64(3), 3),
        (float, 2, 2.0),
        (PositiveInt | None, None, None),
        (NonNegativeInt, 0, 0),
        (UnitFloat, 1, 1.0),
        (Literal["a", "b"], "b", "b"),
        (tuple[float, float] | None, [1, 2.5], (1.0, 2.5)),
        (Sequence[float] | None, np.array([1.0, 2.0]), [1.0, 2.0]),
        (Fields, ["image", "state.pos"], ["image", "state.pos"]),
        (Any, object, object),
    ],
)
def test_accepted_values_come_back_in_plain_python_form(annotation: Any, value: Any, expected: Any) -> None:
    converted = check_argument("w", "x", value, annotation)
    assert converted == expected and type(converted) is type(expected)


@pytest.mark.parametrize(
    ("annotation", "value", "words"),
    [
        (bool, "no", "a bool"),
        (bool, 1, "a bool"),
        (int, True, "an int"),
        (int, 2.0, "an int"),
        (PositiveInt, 0, "a positive int"),
        (PositiveInt | None, -1, "a positive int or None"),
        (NonNegativeFloat, -0.5, "a finite number >= 0"),
        (NonNegativeFloat, np.inf, "a finite number >= 0"),
        (UnitFloat, 1.5, r"a number in \[0, 1\]"),
        (float, "1.0", "a number"),
        (Literal["a", "b"], "c", "one of 'a', 'b'"),
        (tuple[float, float], (1.0,), r"a \(low, high\) pair of numbers"),
        (Sequence[float] | None, "abc", "a list of numbers or None"),
        (Fields, "image", "a list of 'a.b.c' paths, none repeated or inside another, or None"),
        (Fields, ["a", "a.b"], "a list of 'a.b.c' paths, none repeated or inside another, or None"),
    ],
)
def test_rejected_values_name_the_wrapper_argument_and_what_it_accepts(annotation: Any, value: Any, words: str) -> None:
    with pytest.raises(ConfigError, match=rf"^w: x must be {words}; got {re.escape(repr(value))}$"):
        check_argument("w", "x", value, annotation)
    assert describe(PositiveInt | None) == "a positive int or None"


def test_a_rule_declares_keyword_only_arguments() -> None:
    def rule(obs_space: Any, act_space: Any, rew_space: Any, *, n: PositiveInt = 2, name: str = "x") -> Any:
        return obs_space, act_space, rew_space

    params = rule_parameters(rule, "Rule")
    assert [(p.name, p.default, p.required) for p in params.values()] == [("n", 2, False), ("name", "x", False)]
    with pytest.raises(TypeError, match=r"Rule.space_rule must take \(obs_space, act_space, rew_space, \*"):
        rule_parameters(lambda obs_space, act_space: None, "Rule")


def test_placeholders_know_only_their_shape() -> None:
    box, discrete = shape_to_space((2, 3)), shape_to_space(4)
    assert is_placeholder(box) and is_placeholder(discrete) and not is_placeholder(spaces.Discrete(4))
    assert describe_space(box, "observation") == "observation shape (2, 3) (Box)"
    assert describe_space(spaces.Dict({"a": shape_to_space(3)})) == "shape {'a': 3} (Dict)"
    with pytest.raises(SpaceKindError, match=r"w needs a Box action; got action shape 4 \(Discrete\)") as caught:
        require_box(discrete, "w", "action")
    assert isinstance(caught.value, ShapeRuleError) and isinstance(caught.value, TypeError)
