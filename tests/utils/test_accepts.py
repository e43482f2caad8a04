"""Declared config defaults: what a declaration and a plain default accept, and that every component's defaults are
declared and plain where they are read."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import pytest

import dizoo.atari.envs
import dizoo.box2d.bipedalwalker.envs
import dizoo.box2d.lunarlander.envs
import dizoo.carla.driving.envs
import dizoo.classic_control.acrobot.envs
import dizoo.classic_control.cartpole.envs
import dizoo.classic_control.mountain_car.envs
import dizoo.classic_control.pendulum.envs
import dizoo.dmc.envs
import dizoo.mujoco.envs
import dizoo.petting_zoo.envs  # noqa: F401  (registers the dizoo envs)
from ding.config.builtin_policies import BUILTIN_POLICY_MODULES
from ding.config.policy_registry import POLICY_REGISTRY
from ding.config.shapes import MODEL_SPEC_KEYS
from ding.envs.env_manager.factory import ENV_MANAGER_REGISTRY
from ding.envs.env_registry import ENV_REGISTRY
from ding.errors import ConfigError
from ding.model.mavac import MULTI_AGENT_SHAPE_KEYS
from ding.utils.accepts import (
    Accepts,
    check_value,
    check_values,
    count,
    fixed,
    fraction,
    one_of,
    optional,
    plain_defaults,
    positive,
    redeclare,
    rule_of,
    typed,
    unit,
)


@pytest.mark.parametrize(
    ("default", "accepted", "refused"),
    [
        (True, [False, np.bool_(True)], [1, "yes", None]),
        (3, [0, -2, np.int64(5)], [3.0, 1e4, True, "3", None]),
        (0.5, [1, -2.5, np.float32(0.1)], [math.nan, math.inf, "0.5", True, None, [0.5], 10**400]),
        ("exp", ["linear"], [1, None, ["exp"]]),
        ([1, 2], [[], (3,)], ["12", 3, None]),
    ],
    ids=["bool", "int", "float", "str", "list"],
)
def test_a_plain_default_accepts_values_of_its_type(default: Any, accepted: list[Any], refused: list[Any]) -> None:
    rule = rule_of(default)
    assert rule is not None
    for value in accepted:
        rule.check(value, "key")
    for value in refused:
        with pytest.raises(ConfigError, match=r"^key must be "):
            rule.check(value, "key")


@pytest.mark.parametrize(
    ("declared", "accepted", "refused", "words"),
    [
        (count(8), [1, 10**9], [0, -2, 2.0, math.nan, True, None], "a positive int"),
        (count(8, high=1024), [1, 1024], [1025, 10**9], "an int in [1, 1024]"),
        (count(0, low=0), [0, 3], [-1], "an int >= 0"),
        (positive(1e-3), [1, 1e-9], [0, -1, math.nan, math.inf, "1e-3", None], "a finite number > 0"),
        (fraction(0.99), [1, 1e-6], [0, 1.01, math.nan, -0.5], "a number in (0, 1]"),
        (unit(0.5), [0, 1, 0.25], [-0.1, 1.5, math.nan], "a number in [0, 1]"),
        (one_of("exp", "linear", default="exp"), ["linear"], ["cosine", None, 1], "one of 'exp', 'linear'"),
        (optional(count()), [None, 3], [0, "3"], "a positive int or None"),
        (fixed(False, note="why"), [False], [True, 0, None], "False (why)"),
    ],
)
def test_a_declaration_accepts_what_it_says(
    declared: Accepts, accepted: list[Any], refused: list[Any], words: str
) -> None:
    assert str(declared) == words
    for value in accepted:
        declared.check(value, "policy.key")
    for value in refused:
        with pytest.raises(ConfigError, match="^" + re.escape(f"policy.key must be {words}, got ")):
            declared.check(value, "policy.key")


def test_the_error_names_the_key_path_the_value_and_what_is_accepted() -> None:
    declared = {"learn": {"learning_rate": positive(1e-3)}}
    with pytest.raises(ConfigError, match=r"^policy\.learn\.learning_rate must be a finite number > 0, got -1$"):
        check_values(declared, {"learn": {"learning_rate": -1}}, "policy")
    with pytest.raises(ConfigError, match=r"^policy\.learn must be a dict, got int 3$"):
        check_value(declared, "learn", 3, "policy.learn")


def test_a_declared_default_must_be_accepted_by_its_own_rule() -> None:
    with pytest.raises(TypeError, match="a declared default must be accepted by its own rule: 0 is not a positive int"):
        count(0)


def test_redeclare_changes_defaults_and_keeps_rules() -> None:
    base = {"env_id": optional(str), "learn": {"batch_size": count(64), "ignore_done": False}}
    changed = redeclare(base, {"env_id": typed("CartPole-v1"), "learn": {"batch_size": 256, "extra": 1}})
    assert plain_defaults(changed) == {
        "env_id": "CartPole-v1",
        "learn": {"batch_size": 256, "ignore_done": False, "extra": 1},
    }
    with pytest.raises(ConfigError, match=r"^learn\.batch_size must be a positive int, got 0$"):
        check_values(changed, {"learn": {"batch_size": 0}}, "")
    with pytest.raises(ConfigError, match=r"^env_id must be a str, got None$"):
        check_values(changed, {"env_id": None}, "")
    assert base["learn"]["batch_size"].default == 64  # the base is left as it was


# ----- every component's declared config -------------------------------------------------------------------------
def _values(node: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in node.items():
        where = f"{path}.{key}" if path else str(key)
        if isinstance(value, Mapping):
            yield from _values(value, where)
        else:
            yield where, value


SHAPE_KEYS = {*MODEL_SPEC_KEYS, *MULTI_AGENT_SHAPE_KEYS}
"""Model keys filled from the env's spaces, and checked against them (:mod:`ding.config.shapes`)."""


def _declared_components() -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    for name in sorted(BUILTIN_POLICY_MODULES):
        policy: Any = POLICY_REGISTRY.get(name)
        for user in ({}, {"multi_agent": True}) if name == "ppo" else ({},):
            yield f"policy {name} {user}", policy.declared_for(user), policy.defaults_for(user)
    for name in sorted(ENV_REGISTRY.names()):
        env: Any = ENV_REGISTRY.get(name)
        if env.declares_config() and env.__module__.startswith(("ding.", "dizoo.")):
            yield f"env {name}", env.declared_config(), dict(env.default_config())
    for name in sorted(ENV_MANAGER_REGISTRY.names()):
        manager: Any = ENV_MANAGER_REGISTRY.get(name)
        yield f"manager {name}", manager.config, {k: v for k, v in manager.default_config().items() if k != "cfg_type"}


COMPONENTS = list(_declared_components())


@pytest.mark.parametrize(("name", "declared", "defaults"), COMPONENTS, ids=[c[0] for c in COMPONENTS])
def test_defaults_are_plain_values_of_the_declarations(name: str, declared: dict[str, Any], defaults: Any) -> None:
    assert plain_defaults(declared) == defaults
    assert not any(isinstance(value, Accepts) for _, value in _values(defaults))
    check_values(declared, defaults, name)  # every default is accepted by its own rule


POLICY_ENV_NONE_DEFAULTS_LEFT_OPEN = {"env.type", "env.manager"}


@pytest.mark.parametrize(("name", "declared", "defaults"), COMPONENTS, ids=[c[0] for c in COMPONENTS])
def test_a_none_default_states_what_it_accepts(name: str, declared: dict[str, Any], defaults: Any) -> None:
    """A plain None accepts anything: every None default of ding's policies and envs is declared instead (the keys the
    env's spaces fill, and the managers' own checks of their extra keys, aside)."""
    if name.startswith("manager"):
        return  # the zmq, ray and envpool managers check their own keys (check_settings)
    open_keys = [
        path for path, value in _values(declared) if value is None and path.rsplit(".", 1)[-1] not in SHAPE_KEYS
    ]
    assert open_keys == [], f"{name}: None defaults without a declaration: {open_keys}"
