"""Bad input is rejected with an error naming the env, the value and what is accepted, and changes nothing.

Every rejected call is checked against a twin manager that never saw it: the next valid steps
of both give the same results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager, EnvState
from ding.errors import ConfigError, EnvManagerError, ManagerStateError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv
from tests.envs.env_manager.conftest import MakeManager, make_manager
from tests.envs.env_manager.envs import assert_tree_equal, play, table_policy

CARTPOLE = partial(CartPoleEnv, cfg={})
PENDULUM = partial(PendulumEnv, cfg={})
PENDULUM_BOX = re.escape("ClippedBox(-1.0, 1.0, (1,), float32)")  # act_scale: the agent acts in [-1, 1], clipped


def launched(new_manager: MakeManager, kind: str, env_fn: Callable[[], Any], n: int = 2, **cfg: Any) -> BaseEnvManager:
    manager = new_manager(kind, [env_fn] * n, **cfg)
    manager.seed(0)
    manager.launch()
    return manager


def assert_twins_agree(manager: BaseEnvManager, twin: BaseEnvManager, actions: dict[int, Any]) -> None:
    """``manager`` (which rejected calls) and ``twin`` (which did not) step identically from here on."""
    assert_tree_equal(manager.ready_obs, twin.ready_obs, "ready_obs after the rejected call")
    assert manager.env_states == twin.env_states
    a, b = manager.step(actions), twin.step(actions)
    assert sorted(a) == sorted(b)
    for env_id in b:
        assert_tree_equal(a[env_id]._asdict(), b[env_id]._asdict(), f"env {env_id} timestep")


# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------

DISCRETE_CASES: dict[str, tuple[dict[Any, Any], type[Exception], str]] = {
    "too_many_actions": (
        {0: 0, 1: 1, 2: 0},
        ValueError,
        r"(step\(\) got 3 actions for 2 ready envs|unknown env id 2).*ready.*\[0, 1\]",
    ),
    "unknown_env_id": ({0: 1, 7: 0}, ValueError, r"unknown env id 7; ids are 0\.\.1, ready: \[0, 1\]"),
    "negative_env_id": ({-1: 0}, ValueError, r"unknown env id -1; ids are 0\.\.1"),
    "string_env_id": ({"a": 0}, ValueError, r"unknown env id 'a'; ids are 0\.\.1"),
    "float_action": (
        {0: 1, 1: 0.5},
        TypeError,
        r"env 1: .*action 0\.5 is not a single integer; expected one of Discrete\(2\)",
    ),
    "float_valued_action": (
        {0: np.float64(1.0)},
        TypeError,
        r"env 0: .*action np\.float64\(1\.0\) is not a single int",
    ),
    "string_action": ({0: "1"}, TypeError, r"env 0: .*action '1' is not a single integer; expected .*Discrete\(2\)"),
    "action_out_of_range": (
        {0: 1, 1: 2},
        ValueError,
        r"env 1: .*action 2 is out of range for Discrete\(2\) \(accepted 0\.\.1\)",
    ),
    "negative_action": ({0: -1}, ValueError, r"env 0: .*action -1 is out of range for Discrete\(2\)"),
    "two_values_for_discrete": ({1: [0, 1]}, TypeError, r"env 1: .*action \[0, 1\] is not a single integer"),
}


@pytest.mark.parametrize("case", sorted(DISCRETE_CASES))
def test_bad_discrete_step_is_rejected_without_effect(case: str, manager_kind: str, new_manager: MakeManager) -> None:
    actions, error, pattern = DISCRETE_CASES[case]
    manager = launched(new_manager, manager_kind, CARTPOLE)
    twin = launched(new_manager, manager_kind, CARTPOLE)
    with pytest.raises(error, match=pattern):
        manager.step(actions)
    assert_twins_agree(manager, twin, {0: 1, 1: 0})
    assert_twins_agree(manager, twin, {1: 1})


BOX_CASES: dict[str, tuple[Any, type[Exception], str]] = {
    "three_values": (
        np.zeros(3, np.float32),
        ValueError,
        rf"env 1: .*action of shape \(3,\) does not fit {PENDULUM_BOX}",
    ),
    "matrix": (np.zeros((2, 2)), ValueError, rf"env 1: .*action of shape \(2, 2\) does not fit {PENDULUM_BOX}"),
    "empty": ([], ValueError, r"env 1: .*action of shape \(0,\) does not fit (Clipped)?Box"),
}


@pytest.mark.parametrize("case", sorted(BOX_CASES))
def test_bad_box_action_shape_is_rejected_without_effect(
    case: str, manager_kind: str, new_manager: MakeManager
) -> None:
    action, error, pattern = BOX_CASES[case]
    manager = launched(new_manager, manager_kind, PENDULUM)
    twin = launched(new_manager, manager_kind, PENDULUM)
    with pytest.raises(error, match=pattern):
        manager.step({0: np.array([0.5], np.float32), 1: action})
    assert_twins_agree(manager, twin, {0: np.array([0.5], np.float32), 1: np.array([-0.25], np.float32)})


def test_box_action_forms_of_the_right_size_are_equivalent(manager_kind: str, new_manager: MakeManager) -> None:
    forms = [np.array([0.3], np.float32), 0.3, [0.3], np.array(0.3), np.array([[0.3]])]
    managers = [launched(new_manager, manager_kind, PENDULUM, n=1) for _ in forms]
    results = [m.step({0: form})[0] for m, form in zip(managers, forms, strict=True)]
    for result in results[1:]:
        assert_tree_equal(result._asdict(), results[0]._asdict(), "pendulum timestep")


def test_env_that_is_not_ready_is_rejected_without_effect(manager_kind: str, new_manager: MakeManager) -> None:
    manager = launched(new_manager, manager_kind, CARTPOLE, auto_reset=False)
    twin = launched(new_manager, manager_kind, CARTPOLE, auto_reset=False)
    while 0 in manager.ready_obs_id:  # end env 0's episode; env 1 keeps still
        manager.step({0: 0})
        twin.step({0: 0})
    assert manager.env_states[0] is EnvState.NEED_RESET
    waiting = r"env 0 is not waiting for an action \(state 'need_reset'\); ready: \[1\]"
    with pytest.raises(ValueError, match=waiting):
        manager.step({0: 1})
    with pytest.raises(ValueError, match=waiting):
        manager.step({1: 1, 0: 1})  # the ready env 1 must not move either
    assert_twins_agree(manager, twin, {1: 1})
    manager.reset({0: {}})
    twin.reset({0: {}})
    assert_twins_agree(manager, twin, {0: 1, 1: 0})


def test_env_that_is_done_is_rejected(manager_kind: str, new_manager: MakeManager) -> None:
    manager = launched(new_manager, manager_kind, CARTPOLE, episode_num=1)
    play(manager, table_policy(2))
    with pytest.raises(ValueError, match=r"env 1 is not waiting for an action \(state 'done'\); ready: \[\]"):
        manager.step({1: 0})


def test_actions_must_be_a_dict(manager_kind: str, new_manager: MakeManager) -> None:
    manager = launched(new_manager, manager_kind, CARTPOLE)
    with pytest.raises(TypeError, match=r"step\(\) takes a dict \{env_id: action\}, got list"):
        manager.step([0, 1])  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Lifecycle misuse
# ---------------------------------------------------------------------------------------------


def test_stepping_before_launch_or_after_close_is_an_error(manager_kind: str) -> None:
    manager = make_manager(manager_kind, [CARTPOLE] * 2)
    name = type(manager).__name__
    with pytest.raises(EnvManagerError, match=rf"{name} is not launched; call launch\(\) first"):
        manager.step({0: 0})
    with pytest.raises(EnvManagerError, match=rf"{name} is not launched"):
        manager.reset()
    manager.launch()
    with pytest.raises(EnvManagerError, match=rf"{name} is already launched"):
        manager.launch()
    manager.close()
    with pytest.raises(EnvManagerError, match=rf"{name} is closed"):
        manager.step({0: 0})


def test_never_launched_manager_closes_cleanly_and_can_still_launch(manager_kind: str) -> None:
    manager = make_manager(manager_kind, [CARTPOLE] * 2)
    manager.close()
    assert manager.closed and manager.env_states == {0: EnvState.VOID, 1: EnvState.VOID}
    with pytest.raises(ManagerStateError, match=r"is not launched; call launch\(\) first"):
        manager.step({0: 0})
    manager.launch()
    assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
    manager.close()


RESET_CASES: dict[str, tuple[Any, type[Exception], str]] = {
    "unknown_env_id": ({0: {}, 9: {}}, ValueError, r"reset_param names env id 9; accepted ids: 0\.\.1"),
    "kwargs_not_a_dict": ({0: 5}, TypeError, r"reset_param\[0\] must be a dict of reset kwargs, got 5"),
    "not_a_dict": ([0], TypeError, r"reset_param must be a dict \{env_id: kwargs\}, got \[0\]"),
}


@pytest.mark.parametrize("case", sorted(RESET_CASES))
def test_bad_reset_is_rejected_without_effect(case: str, manager_kind: str, new_manager: MakeManager) -> None:
    param, error, pattern = RESET_CASES[case]
    manager = launched(new_manager, manager_kind, CARTPOLE)
    twin = launched(new_manager, manager_kind, CARTPOLE)
    manager.step({0: 1, 1: 1})
    twin.step({0: 1, 1: 1})
    with pytest.raises(error, match=pattern):
        manager.reset(param)
    assert_twins_agree(manager, twin, {0: 0, 1: 1})


# ---------------------------------------------------------------------------------------------
# Configs
# ---------------------------------------------------------------------------------------------


def test_unknown_config_key_suggests_the_close_one(manager_kind: str) -> None:
    with pytest.raises(
        ConfigError, match=r"unknown config key 'env\.manager\.episode_nm'; known keys .*Did you mean 'episode_num'\?"
    ):
        make_manager(manager_kind, [CARTPOLE], episode_nm=2)


BAD_VALUES: dict[str, tuple[Any, str]] = {
    "retry_type": ("renw", r"retry_type must be one of 'reset', 'renew' \(reset the failed env .*\), got 'renw'"),
    "context": ("spwn", r"context must be one of 'fork', 'spawn', 'forkserver' or None \(.*\), got 'spwn'"),
    "max_retry": (0, r"max_retry must be a positive int \(attempts per failure; 1 = no retry\), got 0"),
    "retry_waiting_time": (-1, r"retry_waiting_time must be a finite number >= 0 \(seconds to wait .*\), got -1"),
    "connect_timeout": (0, r"connect_timeout must be a finite number of seconds > 0 or None \(.*\), got 0"),
    "wait_num": (0, r"wait_num must be a positive int or inf or None \(.*\), got 0"),
    "envs_per_worker": (0, r"envs_per_worker must be a positive int \(envs each worker process holds\), got 0"),
    "episode_num": (0, r"episode_num must be a positive int or inf \(inf: no limit\), got 0"),
    "step_timeout": (-2.0, r"step_timeout must be a finite number of seconds > 0 or None \(.*\), got -2\.0"),
}


@pytest.mark.parametrize("key", sorted(BAD_VALUES))
def test_bad_config_value_names_the_key_value_and_accepted(key: str, manager_kind: str) -> None:
    value, pattern = BAD_VALUES[key]
    with pytest.raises(ConfigError, match=rf"env\.manager\.{pattern}"):
        make_manager(manager_kind, [CARTPOLE], **{key: value})


def test_wait_num_of_a_whole_batch_manager_must_be_every_env() -> None:
    with pytest.raises(
        ConfigError, match=r"wait_num must be inf .*got 2; the async_subprocess manager returns partial"
    ):
        make_manager("subprocess-1", [CARTPOLE], wait_num=2)
    make_manager("subprocess-1", [CARTPOLE], wait_num=float("inf")).close()  # DI-engine's sync default


def test_unknown_manager_type_suggests_the_close_one() -> None:
    with pytest.raises(ValueError, match=r"'subproces'.*Did you mean 'subprocess'\?"):
        make_manager("base", [CARTPOLE], type="subproces")


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------

SEED_CASES: dict[str, tuple[Any, type[Exception] | tuple[type[Exception], ...], str]] = {
    "string": ("7", TypeError, r"seed must be an int, a list of ints or a dict \{env_id: int\}, got '7'"),
    "float": (1.5, TypeError, r"seed must be an int, .*got 1\.5"),
    "bool": (True, TypeError, r"seed must be an int, .*got True"),
    "short_list": ([1], ValueError, r"seed list has 1 entries for 2 envs"),
    "unknown_env_id": ({0: 1, 5: 2}, ValueError, r"seed dict names env id 5; accepted ids: 0\.\.1"),
    "float_in_list": ([1, 2.5], (TypeError, ValueError), r"env 1.*2\.5"),
    "string_in_dict": ({0: "x"}, (TypeError, ValueError), r"env 0.*'x'"),
}


@pytest.mark.parametrize("case", sorted(SEED_CASES))
def test_bad_seed_is_rejected_without_effect(case: str, manager_kind: str, new_manager: MakeManager) -> None:
    seed, error, pattern = SEED_CASES[case]
    manager = new_manager(manager_kind, [CARTPOLE] * 2, episode_num=1)
    twin = new_manager(manager_kind, [CARTPOLE] * 2, episode_num=1)
    manager.seed(3, dynamic_seed=False)
    twin.seed(3, dynamic_seed=False)
    with pytest.raises(error, match=pattern):
        manager.seed(seed)  # would also switch dynamic seeding on, had it been accepted
    manager.launch()
    twin.launch()
    assert_twins_agree(manager, twin, {0: 1, 1: 0})
