"""Shared-memory layouts come from declared spaces, before any worker starts; undeclared spaces are adopted.

Envs whose constructors refuse to run in the test process prove that the parent never builds an
env to learn its spaces.
"""

from __future__ import annotations

import collections
import multiprocessing
import os
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.env_manager import BaseEnvManager
from ding.envs.env_manager.core.shm import BufferLayout
from ding.envs.env_manager.vector import gymnasium_env_fn, make_vector_env
from ding.envs.values.spaces import EnvSpaces
from ding.errors import EnvSpecError, EnvStepError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv
from tests.envs.env_manager.conftest import SUBPROCESS_KINDS, MakeManager, make_manager
from tests.envs.env_manager.envs import (
    DictObsEnv,
    GuardedDictObsEnv,
    TupleObsEnv,
    assert_same_trajectories,
    assert_tree_equal,
    pid_alive,
    play,
    shm_exists,
    table_policy,
    tree_row,
)


def run(manager: BaseEnvManager, seed: int = 0) -> Any:
    """Seed, launch and play ``manager`` to the end with the fixed per-env action tables."""
    manager.seed(seed)
    manager.launch()
    return play(manager, table_policy(manager.action_space.n))  # type: ignore[attr-defined]


def serial(env_fns: Sequence[Callable[[], Any]], seed: int, **cfg: Any) -> Any:
    """Trajectories of the serial manager over ``env_fns``."""
    with make_manager("base", env_fns, **cfg) as manager:
        return run(manager, seed)


def segment_sizes(names: list[str]) -> collections.Counter[int]:
    return collections.Counter(os.stat(os.path.join("/dev/shm", name)).st_size for name in names)


# ---------------------------------------------------------------------------------------------
# Planning from declared spaces
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [*SUBPROCESS_KINDS, "spawn"])
def test_parent_never_builds_an_env_to_plan_shared_memory(kind: str, new_manager: MakeManager) -> None:
    guarded = [partial(GuardedDictObsEnv, cfg={"forbidden_pid": os.getpid()})] * 3
    with pytest.raises(RuntimeError, match=f"built in process {os.getpid()}"):  # the guard does fire here
        make_manager("base", guarded).launch()

    manager = new_manager(kind, guarded, episode_num=1)
    declared = DictObsEnv.spaces_from_config({})
    assert manager.observation_space == declared.observation  # known before launch, from the config alone
    assert manager.action_space == declared.action
    assert manager.shared_memory_names == []  # nothing is allocated before launch
    actual = run(manager, seed=8)

    names = manager.shared_memory_names
    assert names and all(shm_exists(name) for name in names)
    per_leaf = collections.Counter({3 * 5 * 7 * 3 * 4: 2, 3 * 2 * 4: 4})  # image, pos, vel: ready + final, float32
    assert not per_leaf - segment_sizes(names), f"observation leaves missing from {segment_sizes(names)}"
    assert os.getpid() not in manager.built_in_pid
    expected = serial([partial(DictObsEnv, cfg={})] * 3, seed=8, episode_num=1)
    assert_same_trajectories(actual, expected)


def test_dict_observation_layout() -> None:
    layout = BufferLayout.plan(DictObsEnv.spaces_from_config({}), env_num=4)
    assert layout.obs_paths == (("image",), ("state", "pos"), ("state", "vel"))
    assert [(s.shape, np.dtype(s.dtype)) for s in layout.ready] == [
        ((4, 5, 7, 3), np.float32),
        ((4, 2), np.float32),
        ((4, 2), np.float32),
    ]
    assert [(s.shape, s.dtype) for s in layout.final] == [(s.shape, s.dtype) for s in layout.ready]
    assert layout.action is not None and layout.action.shape == (4,) and np.dtype(layout.action.dtype) == np.int64
    assert layout.reward.shape == (4, 1) and np.dtype(layout.reward.dtype) == np.float32
    names = [spec.name for spec in layout.all_specs()]
    assert len(set(names)) == len(names) and all(name.startswith(f"ding_{os.getpid()}_") for name in names)


def test_every_buffer_has_the_dtype_its_space_declares() -> None:
    frames = spaces.Dict(
        {"frame": spaces.Box(0, 255, (4, 8, 8), np.uint8), "speed": spaces.Box(0, 1, (1,), np.float64)}
    )
    reward = spaces.Box(-1, 1, (2,), np.float64)
    layout = BufferLayout.plan(EnvSpaces(frames, spaces.Discrete(3), reward), env_num=2)
    assert [(s.shape, np.dtype(s.dtype)) for s in layout.ready] == [((2, 4, 8, 8), np.uint8), ((2, 1), np.float64)]
    assert layout.reward.shape == (2, 2) and np.dtype(layout.reward.dtype) == np.float64
    assert layout.ready[0].nbytes == 2 * 4 * 8 * 8  # one byte a pixel


def test_tuple_observation_and_box_action_layout() -> None:
    layout = BufferLayout.plan(TupleObsEnv.spaces_from_config({}), env_num=3)
    assert layout.obs_paths == ((0,), (1,))
    assert [(s.shape, np.dtype(s.dtype)) for s in layout.ready] == [((3, 2), np.float32), ((3,), np.int64)]
    box = BufferLayout.plan(PendulumEnv.spaces_from_config({}), env_num=2)
    assert box.obs_paths == ((),)
    assert box.action is not None and box.action.shape == (2, 1) and np.dtype(box.action.dtype) == np.float32


def test_tuple_observations_match_the_serial_manager(manager_kind: str, new_manager: MakeManager) -> None:
    fns = [partial(TupleObsEnv, cfg={})] * 3
    expected = serial(fns, seed=4, episode_num=2)
    manager = new_manager(manager_kind, fns, episode_num=2)
    manager.seed(4)
    manager.launch()
    batch = manager.ready_obs_batch()
    assert isinstance(batch.obs, tuple) and len(batch.obs) == 2
    assert batch.obs[0].shape == (3, 2) and batch.obs[0].dtype == np.float32
    assert batch.obs[1].shape == (3,) and batch.obs[1].dtype == np.int64
    for row, env_id in enumerate(batch.env_ids):
        assert_tree_equal(tree_row(batch.obs, row), manager.ready_obs[int(env_id)], f"row {row}")
    assert_same_trajectories(play(manager, table_policy(2)), expected)


def test_constructors_declaring_different_spaces_are_rejected(manager_kind: str) -> None:
    with pytest.raises(EnvSpecError, match=r"env 1 declares spaces .*Box.*, but env 0 declares .*Discrete\(2\)"):
        make_manager(manager_kind, [partial(CartPoleEnv, cfg={}), partial(PendulumEnv, cfg={})])


# ---------------------------------------------------------------------------------------------
# Constructors that declare nothing
# ---------------------------------------------------------------------------------------------

UNDECLARED: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {
    "cartpole": (lambda: CartPoleEnv({}), partial(CartPoleEnv, cfg={})),
    "dict_obs": (lambda: DictObsEnv({}), partial(DictObsEnv, cfg={})),
}
"""A plain callable (spaces unknown until built) and the equivalent declaring constructor."""


def guarded_dict_obs_env() -> DictObsEnv:
    """A plain callable whose env refuses to be built in the test process (this module's first importer)."""
    return GuardedDictObsEnv({"forbidden_pid": TEST_PID})


TEST_PID = os.getpid()


@pytest.mark.parametrize("env", sorted(UNDECLARED))
def test_undeclared_spaces_are_probed_before_launch(env: str, manager_kind: str, new_manager: MakeManager) -> None:
    plain, declaring = UNDECLARED[env]
    manager = new_manager(manager_kind, [plain] * 3, episode_num=2)
    declared = declaring.func.spaces_from_config({})  # type: ignore[attr-defined]
    assert (manager.observation_space, manager.action_space, manager.reward_space) == tuple(declared)
    assert getattr(manager, "shared_memory_names", []) == []
    actual = run(manager, seed=6)
    if manager_kind in SUBPROCESS_KINDS:
        assert manager.shared_memory_names and all(shm_exists(name) for name in manager.shared_memory_names)
    assert_same_trajectories(actual, serial([declaring] * 3, seed=6, episode_num=2))


@pytest.mark.parametrize("kind", [*SUBPROCESS_KINDS, "zmq"])
def test_process_managers_probe_undeclared_spaces_in_a_child(kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(kind, [guarded_dict_obs_env] * 2, episode_num=1)
    assert manager.observation_space == DictObsEnv.spaces_from_config({}).observation  # no env built here
    run(manager, seed=1)
    assert os.getpid() not in manager.built_in_pid


def test_the_base_manager_reads_undeclared_spaces_from_env_ref() -> None:
    manager = make_manager("base", [lambda: CartPoleEnv({})] * 2)
    assert manager.observation_space == CartPoleEnv.spaces_from_config({}).observation
    assert isinstance(manager.env_ref, CartPoleEnv) and manager._env_ref is manager.env_ref  # kept, as DI-engine's
    manager.close()


@pytest.mark.parametrize("kind", SUBPROCESS_KINDS)
def test_built_envs_that_disagree_on_shared_memory_fail_launch_and_leave_nothing(kind: str) -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    manager = make_manager(kind, [lambda: CartPoleEnv({}), lambda: PendulumEnv({})])
    pattern = r"env 1 was built with observation space Box\(.*\(3,\), float32\), but env 0 has Box\(.*\(4,\)"
    with pytest.raises(EnvSpecError, match=pattern):
        manager.launch()
    assert manager.closed
    assert not any(pid_alive(pid) for pid in manager.worker_pids)
    assert {p.pid for p in multiprocessing.active_children()} <= before
    assert not any(shm_exists(name) for name in manager.shared_memory_names)


@pytest.mark.parametrize("kind", ["base", "subprocess-2"])
def test_undeclared_envs_with_different_spaces_run_side_by_side_without_shared_memory(kind: str) -> None:
    """As in DI-engine: each env checks its own actions, and observations travel as the envs return them."""
    fns = [lambda: CartPoleEnv({}), lambda: PendulumEnv({})]
    with make_manager(kind, fns, shared_memory=False, max_retry=1) as manager:
        manager.launch()
        assert manager.ready_obs[0].shape == (4,) and manager.ready_obs[1].shape == (3,)
        timesteps = manager.step({0: 1, 1: np.array([0.5], np.float32)})
        assert timesteps[0].obs.shape == (4,) and timesteps[1].obs.shape == (3,)
        with pytest.raises(EnvStepError, match=r"env 0 raised .* in step"):
            manager.step({0: "left", 1: np.array([0.5], np.float32)})  # the env itself refuses it (max_retry 1)


def test_box_observation_space_is_a_single_leaf() -> None:
    space = CartPoleEnv.spaces_from_config({}).observation
    assert isinstance(space, spaces.Box)
    layout = BufferLayout.plan(CartPoleEnv.spaces_from_config({}), env_num=5)
    assert layout.obs_paths == ((),) and layout.ready[0].shape == (5, 4)


GYMNASIUM_DYNAMIC_SHAPE = "has a dynamic shape so its not possible to make a static shared memory."
"""What gymnasium's vector tests look for in the TypeError of a space that gets no shared memory (they skip it)."""


class DynamicObsEnv(gym.Env[Any, int]):
    """A gymnasium env whose observations have no fixed shape."""

    action_space = spaces.Discrete(2)

    def __init__(self, space: spaces.Space[Any]) -> None:
        self.observation_space = space

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        return self.observation_space.sample(), {}

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        return self.observation_space.sample(), 0.0, False, False, {}


@pytest.mark.parametrize(
    ("space", "leaf"),
    [
        (spaces.Sequence(spaces.Box(0.0, 1.0, (2,))), "()"),
        (spaces.Graph(spaces.Box(0.0, 1.0, (2,)), spaces.Discrete(3)), "()"),
        (spaces.Dict(a=spaces.Discrete(2), b=spaces.Sequence(spaces.Discrete(2))), "('b',)"),
    ],
)
def test_a_space_without_a_fixed_shape_is_refused_in_gymnasiums_words(space: spaces.Space[Any], leaf: str) -> None:
    env_fns = [gymnasium_env_fn(partial(DynamicObsEnv, space))] * 2
    with pytest.raises(TypeError) as refused:
        make_vector_env({"type": "subprocess"}, env_fns)  # as gymnasium's tests build a vector env
    assert GYMNASIUM_DYNAMIC_SHAPE in str(refused.value) and f"observation leaf {leaf}:" in str(refused.value)
