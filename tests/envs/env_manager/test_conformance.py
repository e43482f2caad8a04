"""Every manager kind behaves like ``BaseEnvManager``: same seeds and actions give the same trajectories.

Each test runs against every fast kind (``manager_kind``); the serial manager is the reference.
"""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import BaseEnvManager, EnvState, get_env_manager_cls
from ding.envs.env_manager.fanout import METHOD_NAME_LIST
from ding.errors import EnvManagerError, ManagerStateError
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.conftest import (
    KIND_CONFIGS,
    SUBPROCESS_KINDS,
    MakeManager,
    exit_grace,
    kind_config,
    make_manager,
)
from tests.envs.env_manager.envs import (
    DictObsEnv,
    Policy,
    StepRecord,
    Trajectories,
    assert_same_trajectories,
    assert_tree_equal,
    episodes,
    pid_alive,
    play,
    processes_ended,
    shm_exists,
    table_policy,
    tree_row,
)

ENVS: dict[str, tuple[Callable[[], Any], int]] = {
    "cartpole": (partial(CartPoleEnv, cfg={}), 2),
    "dict_obs": (partial(DictObsEnv, cfg={}), 3),
}
"""Env constructor and number of discrete actions, by name."""


def fns(env: str, n: int) -> list[Callable[[], Any]]:
    return [ENVS[env][0]] * n


def reference(
    env: str, n: int, seed: Any = 0, policy: Policy | None = None, dynamic_seed: bool = True, **cfg: Any
) -> Trajectories:
    """Trajectories of the serial manager."""
    with make_manager("base", fns(env, n), **cfg) as manager:
        manager.seed(seed, dynamic_seed=dynamic_seed)
        manager.launch()
        return play(manager, policy or table_policy(ENVS[env][1]))


def cartpole_start(obs: np.ndarray) -> bool:
    """CartPole starts every episode with all four values in [-0.05, 0.05]."""
    return bool(np.all(np.abs(obs) <= 0.05))


# ---------------------------------------------------------------------------------------------
# Trajectories
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("env", sorted(ENVS))
def test_trajectories_match_the_serial_manager(env: str, manager_kind: str, new_manager: MakeManager) -> None:
    expected = reference(env, 4, episode_num=3)
    manager = new_manager(manager_kind, fns(env, 4), episode_num=3)
    manager.seed(0)
    manager.launch()
    assert not manager.done
    assert_tree_equal(manager.ready_obs, {i: steps[0].before for i, steps in expected.items()}, "first ready_obs")
    actual = play(manager, table_policy(ENVS[env][1]))
    assert_same_trajectories(actual, expected)
    assert manager.done and manager.ready_obs == {}
    assert set(manager.env_states.values()) == {EnvState.DONE}
    for env_id, steps in actual.items():
        played = episodes(steps)
        assert len(played) == 3, f"env {env_id} played {len(played)} episodes"
        assert all(step.reward.shape == (1,) and step.reward.dtype == np.float32 for step in steps)
        for episode in played:
            last = episode[-1]
            assert last.terminated or last.truncated
            assert not any(step.done for step in episode[:-1])
            np.testing.assert_allclose(
                last.info["eval_episode_return"], np.sum([s.reward for s in episode], axis=0), rtol=1e-5
            )


def test_auto_reset_returns_the_final_obs_and_readies_the_next_episode(
    manager_kind: str, new_manager: MakeManager
) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 2), episode_num=2)
    manager.seed(1)
    manager.launch()
    steps = play(manager, table_policy(2))
    for env_id, records in steps.items():
        first, second = episodes(records)
        end, start = first[-1], second[0]
        assert end.done and not cartpole_start(end.obs), f"env {env_id}: the final obs is not the ended episode's"
        assert cartpole_start(start.before), f"env {env_id}: the next ready obs is not a new episode's first"
        assert not np.array_equal(end.obs, start.before)


def test_dict_observations_cross_shared_memory_intact(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, fns("dict_obs", 2), episode_num=1)
    manager.seed(5)
    manager.launch()
    space = manager.observation_space
    for obs in manager.ready_obs.values():
        assert space.contains(obs)
        assert obs["image"].dtype == np.float32 and obs["image"].shape == (5, 7, 3)
        pixels = obs["image"] * 255
        np.testing.assert_allclose(pixels, np.round(pixels), atol=1e-3)  # scaled from uint8 pixels
    steps = play(manager, table_policy(3))
    for records in steps.values():
        assert all(space.contains(step.obs) for step in records)
        assert all(step.info["speed"] >= 0 for step in records)


def test_spawn_context_matches_the_serial_manager(new_manager: MakeManager) -> None:
    expected = reference("dict_obs", 2, seed=11, episode_num=2)
    manager = new_manager("spawn", fns("dict_obs", 2), episode_num=2)
    manager.seed(11)
    manager.launch()
    assert_same_trajectories(play(manager, table_policy(3)), expected)
    pids, names = manager.worker_pids, manager.shared_memory_names
    assert names and all(shm_exists(name) for name in names)
    manager.close()
    assert not any(pid_alive(pid) for pid in pids)
    assert not any(shm_exists(name) for name in names)


@pytest.mark.parametrize(
    "cfg",
    [{"wait_num": 1, "envs_per_worker": 2}, {"wait_num": 2, "step_wait_timeout": 0.0001}],
    ids=["wait_num=1", "wait_num=2-short_wait"],
)
def test_async_partial_batches_keep_every_env_trajectory(cfg: dict[str, Any], new_manager: MakeManager) -> None:
    expected = reference("dict_obs", 5, seed=3, episode_num=2)
    manager = new_manager("async", fns("dict_obs", 5), episode_num=2, **cfg)
    manager.seed(3)
    manager.launch()
    assert_same_trajectories(play(manager, table_policy(3)), expected)


# ---------------------------------------------------------------------------------------------
# Episode accounting and resets
# ---------------------------------------------------------------------------------------------


def test_episode_num_ends_each_env_and_then_the_manager(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 3), episode_num=2)
    manager.seed(3)
    manager.launch()
    policy = table_policy(2)
    counts = {i: 0 for i in range(3)}
    finished: set[int] = set()
    k = 0
    while not manager.done:
        for env_id in finished:
            assert manager.env_states[env_id] is EnvState.DONE and env_id not in manager.ready_obs_id
        assert set(manager.ready_obs_id) == {0, 1, 2} - finished
        timesteps = manager.step({i: policy(i, k, None) for i in manager.ready_obs_id})
        k += 1
        assert set(timesteps) == {0, 1, 2} - finished, "a finished env was stepped"
        for env_id, ts in timesteps.items():
            counts[env_id] += ts.done
            if counts[env_id] == 2:
                finished.add(env_id)
        assert manager.done == (finished == {0, 1, 2})
    assert counts == {0: 2, 1: 2, 2: 2}
    with pytest.raises(ValueError, match=r"no actions.*; ready env ids: \[\]"):
        manager.step({})


def play_with_manual_resets(manager: BaseEnvManager, policy: Policy, n_episodes: int) -> Trajectories:
    """Drive a manager without auto-reset: an env whose episode ended sits out one step, then is reset."""
    records: Trajectories = {i: [] for i in range(manager.env_num)}
    waiting: dict[int, int] = {}  # env id -> steps it has sat out

    def unfinished(env_id: int) -> bool:
        return sum(step.done for step in records[env_id]) < n_episodes

    while any(unfinished(i) for i in records):
        for env_id, sat_out in list(waiting.items()):
            if sat_out >= 1 or not any(unfinished(i) for i in manager.ready_obs):
                manager.reset({env_id: {}})
                assert manager.env_states[env_id] is EnvState.RUN and env_id in manager.ready_obs_id
                del waiting[env_id]
        ready = {i: obs for i, obs in manager.ready_obs.items() if unfinished(i)}
        actions = {i: policy(i, len(records[i]), obs) for i, obs in ready.items()}
        timesteps = manager.step(actions)
        assert set(timesteps) == set(ready)
        for env_id in waiting:
            waiting[env_id] += 1
            assert manager.env_states[env_id] is EnvState.DONE_EPISODE
        for env_id, ts in timesteps.items():
            records[env_id].append(StepRecord.of(ready[env_id], actions[env_id], ts))
            if ts.done:
                assert manager.env_states[env_id] is EnvState.DONE_EPISODE
                assert env_id not in manager.ready_obs and env_id not in manager.ready_obs_id
                if unfinished(env_id):
                    waiting[env_id] = 0
    return records


def test_without_auto_reset_an_env_waits_for_reset(manager_kind: str, new_manager: MakeManager) -> None:
    expected = reference("cartpole", 3, seed=4, episode_num=3)
    manager = new_manager(manager_kind, fns("cartpole", 3), auto_reset=False)
    manager.seed(4)
    manager.launch()
    actual = play_with_manual_resets(manager, table_policy(2), n_episodes=3)
    assert_same_trajectories(actual, expected)
    assert not manager.done


def test_without_auto_reset_the_last_episode_makes_the_env_done(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 2), auto_reset=False, episode_num=1)
    manager.launch()
    policy = table_policy(2)
    k = 0
    while not manager.done:
        manager.step({i: policy(i, k, None) for i in manager.ready_obs_id})
        k += 1
    assert manager.env_states == {0: EnvState.DONE, 1: EnvState.DONE}
    manager.reset({1: {}})  # an explicit reset plays one more episode; counts restart only at launch
    assert manager.env_states == {0: EnvState.DONE, 1: EnvState.RUN}
    assert manager.ready_obs_id == [1] and not manager.done
    while not manager.done:
        manager.step({1: policy(1, k, None)})
        k += 1
    assert manager.env_states == {0: EnvState.DONE, 1: EnvState.DONE}


def test_env_states_follow_the_state_machine(manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 2), auto_reset=False, episode_num=2)
    assert manager.env_states == {0: EnvState.VOID, 1: EnvState.VOID}
    assert manager.closed and not manager.launched and not manager.done
    manager.launch()
    assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
    assert manager.launched and not manager.closed
    k = 0
    while 0 in manager.ready_obs_id:
        manager.step({i: table_policy(2)(i, k, None) for i in manager.ready_obs_id})
        k += 1
    assert manager.env_states[0] is EnvState.NEED_RESET and not manager.env_state_done(0)
    manager.reset({0: {}})
    assert manager.env_states[0] is EnvState.RUN
    manager.reset()
    assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
    manager.close()
    assert manager.env_states == {0: EnvState.VOID, 1: EnvState.VOID}
    assert manager.closed and not manager.done


# ---------------------------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------------------------


def same_actions_everywhere(env_id: int, k: int, obs: Any) -> int:
    """The same action sequence for every env, so an env's trajectory depends on its seed only."""
    return int(table_policy(2)(0, k, obs))


def seeded_run(kind: str, new_manager: MakeManager, seed: Any, *, after_launch: bool = False) -> Trajectories:
    manager = new_manager(kind, fns("cartpole", 2), episode_num=1)
    if after_launch:
        manager.launch()
        manager.seed(seed)
        manager.reset()
    else:
        manager.seed(seed)
        manager.launch()
    return play(manager, same_actions_everywhere)


def test_seed_forms_are_equivalent(manager_kind: str, new_manager: MakeManager) -> None:
    by_int = seeded_run(manager_kind, new_manager, 7)
    assert_same_trajectories(by_int, reference("cartpole", 2, seed=7, policy=same_actions_everywhere, episode_num=1))
    assert_same_trajectories(seeded_run(manager_kind, new_manager, [7, 8]), by_int)
    assert_same_trajectories(seeded_run(manager_kind, new_manager, {0: 7, 1: 8}), by_int)
    assert_same_trajectories(seeded_run(manager_kind, new_manager, 7, after_launch=True), by_int)
    swapped = seeded_run(manager_kind, new_manager, [8, 7])
    assert_same_trajectories({0: swapped[1], 1: swapped[0]}, {0: by_int[0], 1: by_int[1]})
    only_second = seeded_run(manager_kind, new_manager, {1: 8})
    assert_same_trajectories({1: only_second[1]}, {1: by_int[1]})
    other = seeded_run(manager_kind, new_manager, 9)
    assert not np.array_equal(other[0][0].before, by_int[0][0].before)


def obs_policy(env_id: int, k: int, obs: Any) -> int:
    """An action that depends only on the observation, so equal episode starts give equal episodes."""
    return int(abs(float(obs[0]) * 1e4)) % 2


@pytest.mark.parametrize("dynamic_seed", [False, True])
def test_dynamic_seed_false_repeats_every_episode(
    dynamic_seed: bool, manager_kind: str, new_manager: MakeManager
) -> None:
    """Without dynamic seeding every episode of an env starts (and, under an obs-only policy, runs) the same."""
    manager = new_manager(manager_kind, fns("cartpole", 2), episode_num=3)
    manager.seed(21, dynamic_seed=dynamic_seed)
    manager.launch()
    steps = play(manager, obs_policy)
    expected = reference("cartpole", 2, seed=21, policy=obs_policy, dynamic_seed=dynamic_seed, episode_num=3)
    assert_same_trajectories(steps, expected)
    for env_id, records in steps.items():
        first, *rest = episodes(records)
        for again in rest:
            same = len(again) == len(first) and all(
                np.array_equal(a.obs, b.obs) for a, b in zip(again, first, strict=True)
            )
            assert same != dynamic_seed, f"env {env_id}: dynamic_seed={dynamic_seed}"
    assert not np.array_equal(steps[0][0].before, steps[1][0].before)  # seed + env id: envs differ


# ---------------------------------------------------------------------------------------------
# Ready observations, method fan-out, replays
# ---------------------------------------------------------------------------------------------


def assert_views_agree(manager: BaseEnvManager) -> None:
    ready = manager.ready_obs
    ids = manager.ready_obs_id
    assert ids == sorted(ready) and ids == sorted(ids)
    batch = manager.ready_obs_batch()
    assert batch.env_ids.tolist() == ids
    for row, env_id in enumerate(ids):
        assert_tree_equal(tree_row(batch.obs, row), ready[env_id], f"batch row {row} (env {env_id})")


@pytest.mark.parametrize("env", sorted(ENVS))
def test_ready_obs_views_agree(env: str, manager_kind: str, new_manager: MakeManager) -> None:
    manager = new_manager(manager_kind, fns(env, 3), auto_reset=False)
    manager.seed(3)  # a seed whose three first episodes end at different steps (checked below), for both envs
    manager.launch()
    assert_views_agree(manager)
    policy = table_policy(ENVS[env][1])
    k = 0
    while len(manager.ready_obs_id) == 3:
        manager.step({i: policy(i, k, None) for i in manager.ready_obs_id})
        k += 1
        assert_views_agree(manager)
    assert 0 < len(manager.ready_obs_id) < 3
    assert_views_agree(manager)  # a partial batch: only the envs still running
    while manager.ready_obs_id:
        manager.step({i: policy(i, k, None) for i in manager.ready_obs_id})
        k += 1
    with pytest.raises(EnvManagerError, match="no env is ready; env states: 0:need_reset"):
        manager.ready_obs_batch()


def with_env_methods(kind: str, *methods: str) -> type[BaseEnvManager]:
    """The manager class of ``kind``, extended to call the env methods ``methods`` on every env."""
    base = get_env_manager_cls(KIND_CONFIGS[kind])
    listed = property(lambda self: [*METHOD_NAME_LIST, *methods])
    return type(f"{base.__name__}WithMethods", (base,), {"method_name_list": listed})


def test_env_attributes_and_listed_methods_fan_out(manager_kind: str) -> None:
    cls = with_env_methods(manager_kind, "scaled", "env_pid")
    manager = cls(fns("dict_obs", 3), {k: v for k, v in kind_config(manager_kind, 3).items() if k != "type"})
    try:
        with pytest.raises(AttributeError, match=r"is not launched: env attributes such as 'built_in_pid' are read"):
            _ = manager.built_in_pid
        assert not hasattr(manager, "built_in_pid")
        manager.seed(5)
        manager.launch()
        assert manager._seed == [5, 6, 7]  # a private env attribute, read as DI-engine's tests do
        pids = manager.built_in_pid
        if manager_kind == "base":
            assert pids == [os.getpid()] * 3
        elif manager_kind == "thread":  # envs in threads of this process, no worker process
            assert pids == [os.getpid()] * 3 and manager.worker_pids == [None] * 3
        elif manager_kind == "in-caller":  # group 0 (envs 0, 1) is stepped here, group 1 in its worker
            workers = manager.worker_pids
            assert pids == [os.getpid(), os.getpid(), workers[1]] and workers[1] != os.getpid()
        else:
            per_worker = 2 if manager_kind == "subprocess-2" else 1
            workers = manager.worker_pids
            assert pids == [workers[i // per_worker] for i in range(3)] and os.getpid() not in pids
        assert manager.env_pid() == pids  # a listed method: called on every env
        assert manager.scaled(1.5, factor=3.0) == [4.5, 4.5, 4.5]
        with pytest.raises(RuntimeError, match=r"'raw_spaces' is an env method, and only the methods in method_name_l"):
            manager.raw_spaces({})
        with pytest.raises(AttributeError, match="has no attribute 'no_such_name', and its envs have none either"):
            _ = manager.no_such_name
    finally:
        manager.close()


def test_save_replay_writes_videos_per_env(manager_kind: str, new_manager: MakeManager, tmp_path: Path) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 2), episode_num=1)
    manager.enable_save_replay(str(tmp_path))
    manager.seed(0)
    manager.launch()
    play(manager, table_policy(2))
    manager.close()
    for env_id in range(2):
        videos = sorted((tmp_path / f"env{env_id}").glob("*.mp4"))
        assert [v.name for v in videos] == ["replay-episode-0000.mp4"], f"env {env_id}: {videos}"
        assert videos[0].stat().st_size > 0


def test_save_replay_enabled_after_launch_keeps_episodes_running(
    manager_kind: str, new_manager: MakeManager, tmp_path: Path
) -> None:
    manager = new_manager(manager_kind, fns("cartpole", 2), episode_num=2)
    manager.seed(0)
    manager.launch()
    manager.enable_save_replay([str(tmp_path / "a"), str(tmp_path / "b")])
    steps = play(manager, table_policy(2))
    abnormal = [(i, s.info["error"]) for i, r in steps.items() for s in r if s.info.get("abnormal")]
    assert not abnormal, f"enabling replays broke running episodes: {abnormal}"
    assert_same_trajectories(steps, reference("cartpole", 2, episode_num=2))
    manager.close()
    for directory in ("a", "b"):
        assert list((tmp_path / directory).glob("*.mp4")), f"no video in {directory}"


# ---------------------------------------------------------------------------------------------
# Closing
# ---------------------------------------------------------------------------------------------


def test_close_is_idempotent_and_releases_workers_and_memory(manager_kind: str) -> None:
    before = {p.pid for p in multiprocessing.active_children()}
    manager = make_manager(manager_kind, fns("dict_obs", 3), episode_num=1)
    manager.launch()
    manager.step({i: 0 for i in manager.ready_obs_id})
    pids = [pid for pid in getattr(manager, "worker_pids", []) if pid is not None]
    names = list(getattr(manager, "shared_memory_names", []))
    if manager_kind in SUBPROCESS_KINDS:
        assert len(pids) == (2 if manager_kind == "subprocess-2" else 3) and all(pid_alive(p) for p in pids)
        assert names and all(shm_exists(name) for name in names)
    manager.close()
    manager.close()
    assert manager.closed
    assert manager.env_states == {i: EnvState.VOID for i in range(3)}
    assert processes_ended(pids, exit_grace())
    assert {p.pid for p in multiprocessing.active_children()} <= before
    assert not any(shm_exists(name) for name in names)


def test_context_manager_closes_even_on_error(manager_kind: str) -> None:
    with pytest.raises(KeyError, match="raised inside"), make_manager(manager_kind, fns("cartpole", 2)) as manager:
        manager.launch()
        pids = [pid for pid in getattr(manager, "worker_pids", []) if pid is not None]
        names = list(getattr(manager, "shared_memory_names", []))
        raise KeyError("raised inside")
    assert manager.closed
    assert processes_ended(pids, exit_grace())
    assert not any(shm_exists(name) for name in names)


KEEP_VIEWS_PAST_CLOSE = """
from functools import partial
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from ding.envs.env_manager import create_env_manager
fns = [partial(CartPoleEnv, cfg={})] * 2
manager = create_env_manager({'type': 'subprocess', 'copy_on_get': False}, fns)
manager.launch()
batch, obs = manager.ready_obs_batch(), manager.ready_obs[0]
manager.close()
for kept in (batch.obs, obs):
    try:
        float(kept.sum())
    except Exception as err:  # an error is an acceptable answer; a crash is not
        print(type(err).__name__)
print('survived')
"""


def test_arrays_kept_past_close_do_not_crash_the_process() -> None:
    root = Path(__file__).resolve().parents[3]
    result = subprocess.run(
        [sys.executable, "-c", KEEP_VIEWS_PAST_CLOSE], cwd=root, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0 and "survived" in result.stdout, (
        f"reading a ready_obs_batch view or a copy_on_get=False observation after close() ended the process "
        f"with code {result.returncode}: {result.stderr[-2000:]}"
    )


CLOSED_CALLS: dict[str, Callable[[BaseEnvManager], Any]] = {
    "step": lambda m: m.step({0: 0}),
    "reset": lambda m: m.reset(),
    "reset_one": lambda m: m.reset({0: {}}),
}


def test_a_closed_manager_refuses_steps_and_launches_afresh(manager_kind: str) -> None:
    manager = make_manager(manager_kind, fns("cartpole", 2))
    manager.seed(3)
    manager.launch()
    first = manager.ready_obs
    pids = [pid for pid in getattr(manager, "worker_pids", []) if pid is not None]
    names = list(getattr(manager, "shared_memory_names", []))
    manager.close()
    name = type(manager).__name__
    for call in CLOSED_CALLS.values():
        with pytest.raises(ManagerStateError, match=rf"{name} is closed; launch\(\) starts it again"):
            call(manager)
        with pytest.raises(AssertionError):  # what DI-engine's managers raise for the same misuse
            call(manager)
    with pytest.raises(EnvManagerError, match="no env is ready; env states: 0:void, 1:void"):
        manager.ready_obs_batch()
    assert manager.ready_obs == {} and manager.ready_obs_id == []
    with pytest.raises(AttributeError, match=r"is not launched: env attributes such as 'render'"):
        manager.render()  # env methods do not fan out while closed
    manager.seed(3)  # seeds and replay settings may change while closed: they apply at the next launch
    manager.launch()
    try:
        assert_tree_equal(manager.ready_obs, first, "ready_obs after launching again")
        assert manager.env_states == {0: EnvState.RUN, 1: EnvState.RUN}
        if manager_kind in SUBPROCESS_KINDS:
            assert not any(pid_alive(pid) for pid in pids) and not any(shm_exists(n) for n in names)
            assert set(manager.worker_pids).isdisjoint(pids) and set(manager.shared_memory_names).isdisjoint(names)
        manager.step({0: 0, 1: 1})
    finally:
        manager.close()
