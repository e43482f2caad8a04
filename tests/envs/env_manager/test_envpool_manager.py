"""The ``envpool`` manager type: real envpool pools behind the manager API and ``ManagerVectorEnv``."""

from __future__ import annotations

import functools
import pathlib
from typing import Any

import numpy as np
import pytest

envpool = pytest.importorskip("envpool")

from ding.config import compile_config, read_config  # noqa: E402
from ding.entry.utils import create_env_managers  # noqa: E402
from ding.envs.env_manager import (  # noqa: E402
    EnvPoolEnvManager,
    EnvState,
    ManagerVectorEnv,
    create_env_manager,
    manager_default_config,
)
from ding.envs.env_manager.envpool import engine as envpool_engine  # noqa: E402
from ding.envs.env_manager.envpool import infos as infos_module  # noqa: E402
from ding.envs.env_manager.envpool.infos import info_rows  # noqa: E402
from ding.envs.env_manager.envpool.results import PoolBatch, PoolLayout  # noqa: E402
from ding.envs.env_manager.envpool.spec import quiet_box_casts  # noqa: E402
from ding.envs.env_manager.envpool_env_manager import PoolEnvManager  # noqa: E402
from ding.envs.env_manager.no_workers import NoWorkers  # noqa: E402
from ding.envs.from_config import role_manager_config  # noqa: E402
from ding.errors import ConfigError, EnvManagerError  # noqa: E402
from dizoo.classic_control.cartpole.envs import CartPoleEnv  # noqa: E402
from tests.ding_cli import run_ding  # noqa: E402


def cartpole(env_num: int = 3, **cfg: object) -> EnvPoolEnvManager:
    return EnvPoolEnvManager({"env_id": "CartPole-v1", "env_num": env_num, **cfg})


def raw_pool(env_seed: list[int], **options: object) -> object:
    with quiet_box_casts():
        return envpool.make("CartPole-v1", env_type="gymnasium", num_envs=len(env_seed), env_seed=env_seed, **options)


def test_spaces_come_from_make_spec_before_any_pool_is_built() -> None:
    manager = EnvPoolEnvManager({"env_id": "Pong-v5", "env_num": 2, "options": {"stack_num": 2}})
    assert manager.observation_space.shape == (2, 84, 84)
    assert manager.observation_space.dtype == np.uint8
    assert manager.action_space.n == 6
    assert manager.reward_space.shape == (1,)
    assert manager.pool is None  # nothing was built to read them
    manager.launch()
    try:
        obs = manager.ready_obs[0]
        assert obs.shape == (2, 84, 84) and obs.dtype == np.uint8
        timesteps = manager.step({0: 1, 1: 0})
        assert manager.observation_space.contains(timesteps[1].obs)
    finally:
        manager.close()


def test_steps_match_a_raw_pool_with_the_same_seeds_and_resets_at_episode_end() -> None:
    rng = np.random.default_rng(0)
    manager = cartpole(3, options={"max_episode_steps": 30})
    manager.seed([11, 12, 13])
    manager.launch()
    raw = raw_pool([11, 12, 13], max_episode_steps=30)
    with quiet_box_casts():
        raw_obs, _ = raw.reset()
    try:
        np.testing.assert_array_equal(np.stack([manager.ready_obs[i] for i in range(3)]), raw_obs)
        endings = 0
        for _ in range(120):
            actions = rng.integers(0, 2, size=3)
            timesteps = manager.step({i: int(actions[i]) for i in range(3)})
            obs, reward, terminated, truncated, _ = raw.step(actions.astype(np.int32), np.arange(3))
            for i in range(3):
                np.testing.assert_array_equal(timesteps[i].obs, obs[i])
                assert timesteps[i].reward.tolist() == [reward[i]]
                assert timesteps[i].terminated == bool(terminated[i])
                assert timesteps[i].truncated == bool(truncated[i] and not terminated[i])
            done = np.flatnonzero(terminated | truncated)
            if len(done):
                endings += len(done)
                with quiet_box_casts():
                    first, _ = raw.reset(done.astype(np.int32))  # ding resets within the step
                for row, env_id in enumerate(done):
                    np.testing.assert_array_equal(manager.ready_obs[int(env_id)], first[row])
        assert endings >= 3
    finally:
        manager.close()


def test_an_episode_end_carries_its_return_and_the_next_episode_starts_at_once() -> None:
    manager = cartpole(1, options={"max_episode_steps": 20})
    manager.launch()
    try:
        rewards = []
        while True:
            timestep = manager.step({0: 1})[0]
            rewards.append(float(timestep.reward[0]))
            if timestep.done:
                break
        assert timestep.info["eval_episode_return"] == pytest.approx(sum(rewards))
        assert int(timestep.info["elapsed_step"]) == len(rewards)
        assert manager.env_states[0] is EnvState.RUN
        assert not np.array_equal(manager.ready_obs[0], timestep.obs)
        assert int(manager.step({0: 0})[0].info["elapsed_step"]) == 1
    finally:
        manager.close()


def test_without_auto_reset_an_env_waits_for_reset_and_episode_num_ends_it() -> None:
    manager = cartpole(2, auto_reset=False, episode_num=2, options={"max_episode_steps": 5})
    manager.launch()
    try:
        for _ in range(5):
            manager.step({i: 0 for i in manager.ready_obs_id})
        assert manager.env_states == {0: EnvState.NEED_RESET, 1: EnvState.NEED_RESET}
        assert manager.ready_obs_id == []
        manager.reset({0: {}})
        assert manager.ready_obs_id == [0]
        manager.reset({1: {}})
        for _ in range(5):
            manager.step({i: 0 for i in manager.ready_obs_id})
        assert manager.done
    finally:
        manager.close()


def first_obs(manager: EnvPoolEnvManager) -> np.ndarray:
    return np.stack([manager.ready_obs[i] for i in range(manager.env_num)])


def test_seeds_replay_runs_and_seeds_given_later_apply_at_the_next_full_reset() -> None:
    runs = []
    for seed in (5, 5, 6):
        manager = cartpole(2)
        manager.seed(seed)
        manager.launch()
        runs.append(first_obs(manager))
        manager.close()
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.array_equal(runs[0], runs[2])
    manager = cartpole(2)
    manager.launch()
    try:
        manager.seed(5)
        manager.reset()
        np.testing.assert_array_equal(first_obs(manager), runs[0])
    finally:
        manager.close()


def test_dynamic_seed_false_replays_the_same_starts_at_every_full_reset() -> None:
    manager = cartpole(2)
    manager.seed(9, dynamic_seed=False)
    manager.launch()
    try:
        start = first_obs(manager)
        for _ in range(3):
            manager.step({0: 1, 1: 1})
        manager.reset()
        np.testing.assert_array_equal(first_obs(manager), start)
    finally:
        manager.close()


def test_dynamic_seeds_give_new_starts_each_episode() -> None:
    manager = cartpole(1)
    manager.seed(9)
    manager.launch()
    try:
        starts = {first_obs(manager).tobytes()}
        for _ in range(3):
            manager.reset()
            starts.add(first_obs(manager).tobytes())
        assert len(starts) == 4
    finally:
        manager.close()


def test_send_recv_and_step_batch() -> None:
    fns = [functools.partial(CartPoleEnv, cfg={}) for _ in range(4)]
    manager = EnvPoolEnvManager(fns, {"env_id": "CartPole-v1", "batch_size": 2})
    manager.async_reset()
    try:
        seen: list[int] = []
        for _ in range(6):
            batch = manager.recv()
            assert batch.obs.shape[1:] == (4,)
            seen += batch.env_ids.tolist()
            manager.send(np.ones(len(batch.env_ids), dtype=np.int64), batch.env_ids)
        manager.step_wait()
        assert sorted(set(seen)) == [0, 1, 2, 3]
        result = manager.step_batch(np.zeros(4, dtype=np.int64))
        assert result.obs.shape == (4, 4) and result.env_ids.tolist() == [0, 1, 2, 3]
    finally:
        manager.close()


def test_step_batch_gives_what_step_gives() -> None:
    rng = np.random.default_rng(1)
    actions = rng.integers(0, 2, size=(60, 3))
    by_step, by_batch = cartpole(3, options={"max_episode_steps": 9}), cartpole(3, options={"max_episode_steps": 9})
    for manager in (by_step, by_batch):
        manager.seed(4)
        manager.launch()
    try:
        for row in actions:
            timesteps = by_step.step({i: int(row[i]) for i in range(3)})
            batch = by_batch.step_batch(row)
            for i in range(3):
                assert batch.done[i] == timesteps[i].done and batch.truncated[i] == timesteps[i].truncated
                np.testing.assert_array_equal(batch.reward[i], timesteps[i].reward)
                np.testing.assert_array_equal(batch.obs[i], by_step.ready_obs[i])
                assert batch.info[i] == timesteps[i].info
                if timesteps[i].done:
                    np.testing.assert_array_equal(batch.final_obs[i], timesteps[i].obs)
        assert by_batch.episode_counts == by_step.episode_counts and by_step.episode_counts[0] >= 5
    finally:
        by_step.close()
        by_batch.close()


@pytest.mark.parametrize(("task", "options"), [("CartPole-v1", {"max_episode_steps": 6}), ("Pong-v5", {})])
def test_the_raw_arrays_read_as_envpool_reads_them(task: str, options: dict[str, object]) -> None:
    """ding reads a pool's _recv arrays by their keys; envpool's own recv gives the same obs, flags and infos."""
    with quiet_box_casts():
        ours = envpool.make(task, env_type="gymnasium", num_envs=3, seed=7, **options)
        theirs = envpool.make(task, env_type="gymnasium", num_envs=3, seed=7, **options)
    layout = PoolLayout.read(ours._state_keys)
    try:
        ours._reset(np.arange(3, dtype=np.int32))
        ours._recv()
        with quiet_box_casts():
            theirs.reset()
        for step in range(12):  # CartPole's episodes are cut at 6 steps: envpool resets them on the next
            actions = np.full(3, step % 2, dtype=np.int32)
            ours.send(actions)
            batch = PoolBatch.read(layout, ours._recv(), dict_obs=False)
            with quiet_box_casts():
                obs, reward, terminated, truncated, info = theirs.step(actions)
            np.testing.assert_array_equal(batch.obs, obs)
            np.testing.assert_array_equal(batch.reward, reward)
            np.testing.assert_array_equal(batch.terminated, terminated)
            np.testing.assert_array_equal(batch.truncated, truncated)
            np.testing.assert_array_equal(batch.done, terminated | truncated)
            for row, made in enumerate(info_rows(batch.info, 3)):
                assert made.keys() == info.keys()
                for key, value in made.items():
                    expected = info[key]
                    if isinstance(expected, dict):
                        assert value == {k: v[row].tolist() for k, v in expected.items()}
                    elif expected.ndim == 1:
                        assert value == expected[row].tolist(), key
                    else:  # a row of an array (Atari's ram): a read-only view, as envpool gives it
                        np.testing.assert_array_equal(value, expected[row], err_msg=key)
                        assert isinstance(value, np.ndarray) and not value.flags.writeable
    finally:
        ours.close()
        theirs.close()


def test_step_batch_makes_an_info_only_where_an_episode_ended_or_it_is_read(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    real = infos_module.info_row
    monkeypatch.setattr(infos_module, "info_row", lambda columns, row: made.append(row) or real(columns, row))
    manager = cartpole(4, options={"max_episode_steps": 3})
    manager.launch()
    try:
        batch = manager.step_batch(np.zeros(4, dtype=np.int64))
        assert made == [] and not batch.done.any()
        assert batch.info[2]["elapsed_step"] == 1 and made == [2]
        assert batch.info[2] is batch.info[-2] and made == [2]  # made once, then kept
        manager.step_batch(np.zeros(4, dtype=np.int64))
        made.clear()
        batch = manager.step_batch(np.zeros(4, dtype=np.int64))  # the third step: every episode is cut
        assert batch.truncated.all() and sorted(made) == [0, 1, 2, 3]
        assert [info["eval_episode_return"] for info in batch.info] == [3.0] * 4
        assert [info["elapsed_step"] for info in batch.info] == [3] * 4
        assert manager.episode_counts == dict.fromkeys(range(4), 1)
    finally:
        manager.close()


@pytest.mark.parametrize(("bad", "named"), [([-1, 0, 1], "-1"), ([0, 2**32 + 1, 0], str(2**32 + 1)), ([0, 1, 2], "2")])
def test_step_batch_refuses_an_integer_out_of_range_before_any_cast(bad: list[int], named: str) -> None:
    """An int64 beyond int32 must not wrap into a valid action on its way to the pool's int32."""
    manager = cartpole(3)
    manager.launch()
    try:
        before = first_obs(manager)
        with pytest.raises(ValueError, match=named):
            manager.step_batch(np.array(bad, dtype=np.int64))
        np.testing.assert_array_equal(first_obs(manager), before)  # nothing moved
        assert manager.step_batch(np.array([1, 0, 1], dtype=np.uint8)).obs.shape == (3, 4)
    finally:
        manager.close()


def test_the_envpool_manager_reports_no_workers_channel_or_shared_memory() -> None:
    manager = cartpole(2)
    manager.launch()
    try:
        assert isinstance(manager.engine, NoWorkers)
        assert manager.worker_pids == [] and manager.shared_memory_names == [] and manager.late_results == 0
        assert manager.engine.refused_replies == 0
        with pytest.raises(EnvManagerError, match="has no channel"):
            _ = manager.channel
    finally:
        manager.close()


@pytest.mark.parametrize("dynamic_seed", [True, False])
def test_step_batch_restarts_episodes_that_end_together_as_step_does(dynamic_seed: bool) -> None:
    """Every episode cut at once: both paths reset every env (rebuilding the pool with dynamic_seed=False, so the
    starts replay), count episodes alike and leave every env DONE after episode_num."""
    by_step, by_batch = (cartpole(3, episode_num=3, options={"max_episode_steps": 5}) for _ in range(2))
    for manager in (by_step, by_batch):
        manager.seed(2, dynamic_seed=dynamic_seed)
        manager.launch()
    start = first_obs(by_batch)
    try:
        for t in range(10):  # two episodes of 5 alternating pushes: CartPole stands, both are cut together
            timesteps = by_step.step({i: t % 2 for i in range(3)})
            batch = by_batch.step_batch(np.full(3, t % 2))
            np.testing.assert_array_equal(batch.obs, first_obs(by_step))
            assert batch.truncated.tolist() == [timesteps[i].truncated for i in range(3)] == [t % 5 == 4] * 3
            if t % 5 == 4:
                for i in range(3):
                    np.testing.assert_array_equal(batch.final_obs[i], timesteps[i].obs)
        assert by_step.episode_counts == by_batch.episode_counts == dict.fromkeys(range(3), 2)
        assert np.array_equal(first_obs(by_batch), start) is not dynamic_seed  # the pool rebuilt: same starts
        for t in range(5):
            by_step.step({i: t % 2 for i in range(3)})
            batch = by_batch.step_batch(np.full(3, t % 2))
        assert by_step.done and by_batch.done and batch.truncated.all() and batch.final_obs.keys() == {0, 1, 2}
        np.testing.assert_array_equal(batch.obs, np.stack([batch.final_obs[i] for i in range(3)]))  # no reset
        with pytest.raises(EnvManagerError, match="step_batch needs every env waiting"):
            by_batch.step_batch(np.zeros(3, dtype=np.int64))
    finally:
        by_step.close()
        by_batch.close()


def test_a_task_with_dict_observations_steps_as_dicts_of_arrays() -> None:
    """dm_control's CheetahRun gives position and velocity arrays: each env's observation is a dict of its rows."""
    manager = EnvPoolEnvManager({"env_id": "CheetahRun-v1", "env_num": 2})
    space = manager.observation_space
    manager.seed(0)
    manager.launch()
    try:
        shapes = {key: sub.shape for key, sub in space.spaces.items()}
        assert {key: value.shape for key, value in manager.ready_obs[1].items()} == shapes
        batch = manager.step_batch(np.zeros((2, *manager.action_space.shape)))
        assert {key: value.shape for key, value in batch.obs.items()} == {k: (2, *v) for k, v in shapes.items()}
        timestep = manager.step({0: np.zeros(manager.action_space.shape), 1: np.ones(manager.action_space.shape)})[1]
        assert {key: value.shape for key, value in timestep.obs.items()} == shapes
        np.testing.assert_array_equal(manager.ready_obs[1]["velocity"], timestep.obs["velocity"])
    finally:
        manager.close()


def test_manager_vector_env_over_envpool_autoresets_on_the_next_step() -> None:
    env = ManagerVectorEnv(cartpole(2, options={"max_episode_steps": 4}))
    try:
        obs, _ = env.reset(seed=3)
        assert obs.shape == (2, 4) and obs.dtype == np.float32
        for _ in range(4):
            obs, reward, terminated, truncated, _ = env.step(np.array([0, 1]))
        assert truncated.all() and reward.dtype == np.float32
        obs, reward, terminated, truncated, _ = env.step(np.array([0, 1]))  # NEXT_STEP: this step resets
        assert not (terminated | truncated).any() and (reward == 0).all()
    finally:
        env.close()


def test_created_by_name_with_ding_and_di_engine_spellings() -> None:
    fns = [functools.partial(CartPoleEnv, cfg={}) for _ in range(2)]
    for name in ("envpool", "env_pool"):
        manager = create_env_manager({"type": name, "env_id": "CartPole-v1"}, fns)
        assert isinstance(manager, EnvPoolEnvManager) and manager.env_num == 2
    assert manager_default_config("envpool").options == {}
    di_engine = PoolEnvManager({"env_id": "Pong-v5", "env_num": 2, "batch_size": 2, "stack_num": 3})
    assert di_engine.observation_space.shape == (3, 84, 84)


@pytest.mark.parametrize(
    ("cfg", "message"),
    [
        ({"env_id": "CartPol-v1"}, r"'CartPol-v1' is not an envpool task; close matches: CartPole-v1"),
        ({"env_id": "CartPole-v1", "options": {"stak_num": 2}}, r"stak_num is not an option .* max_episode_steps"),
        ({"env_id": "CartPole-v1", "options": {"seed": 2}}, r"env.manager.seed is set by the envpool manager"),
        (
            {"env_id": "CartPole-v1", "options": {"batch_size": 3}},
            r"must divide the env count 2, got 3",
        ),
        ({"env_id": "CartPole-v1", "shared_memory": True}, r"shared_memory is True, but the envpool manager has no"),
        ({"env_id": "CartPole-v1", "env_num": 0}, r"needs env_num, an int >= 1 .* got 0"),
        ({"env_num": 2}, r"needs env.manager.env_id"),
        ({"env_id": "CartPole-v1", "num_threads": -3}, r"num_threads must be an int >= 0 .*, got -3"),
        ({"env_id": "CartPole-v1", "thread_affinity_offset": -2}, r"thread_affinity_offset must be an int >= -1"),
    ],
)
def test_bad_configs_are_refused_with_what_is_accepted(cfg: dict[str, object], message: str) -> None:
    cfg.setdefault("env_num", 2)
    with pytest.raises(ConfigError, match=message):
        EnvPoolEnvManager(cfg)


def test_bad_actions_and_unsupported_calls_are_refused() -> None:
    manager = cartpole(2)
    with pytest.raises(EnvManagerError, match="cannot record videos"):
        manager.enable_save_replay("/tmp/unused")
    manager.launch()
    try:
        with pytest.raises(ValueError, match="2"):
            manager.step({0: 2, 1: 0})
        assert manager.ready_obs_id == [0, 1]  # nothing moved
        with pytest.raises(ValueError, match="2"):
            manager.step_batch(np.array([0, 2]))
        with pytest.raises(TypeError, match="float"):
            manager.step_batch(np.array([0.0, 1.0]))
        assert manager.step_batch(np.array([1, 0])).obs.shape == (2, 4)
        with pytest.raises(EnvManagerError, match="no Python methods"):
            manager.call_envs("render")
        with pytest.raises(EnvManagerError, match="take no reset arguments"):
            manager.reset({0: {"seed": 1}})
        with pytest.raises(EnvManagerError, match="has no env object"):
            _ = manager.env_ref
    finally:
        manager.close()
    assert manager.closed and manager.pool is None


def test_di_engine_async_pool_returns_batch_size_envs_per_step() -> None:
    cfg = {"env_id": "Pong-v5", "env_num": 16, "batch_size": 8, "seed": 3, "episodic_life": False, "stack_num": 4}
    manager = PoolEnvManager(cfg)
    assert manager._closed and manager.partial_batches
    manager.launch()
    try:
        assert len(manager.ready_obs) == 16
        for _ in range(20):
            timesteps = manager.step({i: np.random.randint(4) for i in manager.ready_obs})
            assert len(timesteps) == 8
            assert len(manager.ready_obs) == 8  # the other 8 are in the pool
        with pytest.raises(EnvManagerError, match="step_batch needs every env back at once"):
            manager.step_batch(np.zeros(16, dtype=np.int64))
    finally:
        manager.close()
    assert manager._closed


def test_an_async_pool_resets_ended_episodes_and_every_env_keeps_stepping() -> None:
    manager = cartpole(4, options={"batch_size": 2, "max_episode_steps": 7})
    manager.seed(0)
    manager.launch()
    try:
        steps = dict.fromkeys(range(4), 0)
        ends = dict.fromkeys(range(4), 0)
        for _ in range(80):
            for env_id, timestep in manager.step({i: 1 for i in manager.ready_obs_id}).items():
                steps[env_id] += 1
                assert int(timestep.info["elapsed_step"]) == (steps[env_id] - 1) % 7 + 1 or timestep.done
                if timestep.done:
                    ends[env_id] += 1
                    steps[env_id] = 0
                    assert timestep.info["eval_episode_return"] > 0
        assert all(count >= 2 for count in ends.values())
    finally:
        manager.close()


def test_an_async_pool_through_send_recv_returns_envs_that_take_an_action_at_once() -> None:
    """envpool's own asynchronous loop (recv a batch, send actions for its env ids) runs over the manager: an env
    whose episode ended comes back from recv with its reset done, so every env id recv gives takes an action."""
    rng = np.random.default_rng(0)
    manager = cartpole(8, options={"batch_size": 4, "max_episode_steps": 7})
    manager.seed(0)
    manager.async_reset()
    try:
        batch = manager.recv(4)
        assert not batch.done.any()
        steps = dict.fromkeys(range(8), 0)
        sent = received = ends = 0
        firsts = len(batch.env_ids)
        for _ in range(150):
            ids = batch.env_ids
            manager.send(rng.integers(0, 2, size=len(ids)), ids)  # refused if an env were not ready
            sent += len(ids)
            batch = manager.recv(4)
            assert len(batch.env_ids) >= 1
            for row, env_id in enumerate(batch.env_ids.tolist()):
                info = batch.info[row]
                if not info:  # the first observation of the other half, after async_reset
                    firsts += 1
                    continue
                received += 1
                steps[env_id] += 1
                assert int(info["elapsed_step"]) == steps[env_id]  # every step once, in order
                if batch.done[row]:
                    ends += 1
                    assert info["eval_episode_return"] == steps[env_id]  # CartPole: 1 per step
                    assert env_id in manager.ready_obs_id  # its next episode waits for an action
                    np.testing.assert_array_equal(batch.obs[row], manager.ready_obs[env_id])
                    assert not np.array_equal(batch.obs[row], batch.final_obs[env_id])
                    steps[env_id] = 0
        assert ends >= 20 and firsts == 8
        assert sent == received + len(manager.in_flight_env_ids)  # nothing lost or given twice
    finally:
        manager.close()


def test_recv_of_every_env_on_an_async_pool_returns_what_the_pool_can_give_and_loses_nothing() -> None:
    """``recv()`` asks for every env in flight; an asynchronous pool returns ``batch`` envs at a time, and resets of
    ended episodes may be left in it with fewer envs than a batch. recv then returns what has come (the rest come
    with later calls), where it used to raise and drop the steps it had already accounted."""
    manager = cartpole(8, options={"batch_size": 4})
    manager.seed(0)
    manager.async_reset()
    rng = np.random.default_rng(1)
    try:
        batch = manager.recv()
        sent = received = ends = 0
        steps = dict.fromkeys(range(8), 0)
        for _ in range(100):
            ids = batch.env_ids
            manager.send(rng.integers(0, 2, size=len(ids)), ids)  # episodes end at different steps
            sent += len(ids)
            batch = manager.recv()
            assert len(batch.env_ids) >= 1
            for row, env_id in enumerate(batch.env_ids.tolist()):
                received += 1
                steps[env_id] += 1
                assert int(batch.info[row]["elapsed_step"]) == steps[env_id]  # every step once, in order
                if batch.done[row]:
                    ends += 1
                    steps[env_id] = 0
                    assert env_id in manager.ready_obs_id
        assert ends >= 20
        assert sent == received + len(manager.in_flight_env_ids)
    finally:
        manager.close()


def async_pool_rollout(task: str, actions: Any, steps: int = 200) -> list[tuple[Any, ...]]:
    """send / recv on an asynchronous pool of 8 envs in batches of 4, one thread (so the pool's order repeats)."""
    manager = EnvPoolEnvManager({"env_id": task, "env_num": 8, "num_threads": 1, "options": {"batch_size": 4}})
    manager.seed(0)
    manager.async_reset()
    rng = np.random.default_rng(0)
    out = []
    try:
        batch = manager.recv(4)
        for _ in range(steps):
            manager.send(actions(rng, len(batch.env_ids)), batch.env_ids)
            batch = manager.recv(4)
            obs = batch.obs if isinstance(batch.obs, dict) else {"": batch.obs}
            arrays = [batch.env_ids, *obs.values(), batch.reward, batch.done, batch.terminated, batch.truncated]
            order = np.argsort(batch.env_ids, kind="stable")  # rows compared by env id: recv promises no order
            rows = [(a.dtype, a.shape, a[order].tolist()) for a in arrays]
            out.append((rows, [batch.info[i] for i in order.tolist()], sorted(batch.final_obs)))
            for info in batch.info:
                info["mark"] = True  # a caller's own key: it must not reach another batch
        assert manager.ready_obs_id == sorted(set(range(8)) - set(manager.in_flight_env_ids))
    finally:
        manager.close()
    return out


@pytest.mark.parametrize(
    "task, actions",
    [
        ("CartPole-v1", lambda rng, n: rng.integers(0, 2, size=n)),
        ("CheetahRun-v1", lambda rng, n: rng.uniform(-1, 1, size=(n, 6))),  # observations: a dict of arrays
    ],
)
def test_an_async_pool_recv_reads_a_batch_in_which_no_episode_ended_as_arrays_and_gives_what_the_per_env_path_gives(
    task: str, actions: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[int] = []
    timestep = envpool_engine.BaseEnvTimestep
    monkeypatch.setattr(envpool_engine, "BaseEnvTimestep", lambda *a, **k: made.append(1) or timestep(*a, **k))
    as_arrays = async_pool_rollout(task, actions)
    made_for_arrays = len(made)  # only in batches where an episode ended (none in CheetahRun's 200 steps)
    made.clear()
    monkeypatch.setattr(envpool_engine.PoolEngine, "_whole_pool_batch", lambda self, pending, wanted: None)
    per_env = async_pool_rollout(task, actions)
    assert len(made) > 3 * 200 and made_for_arrays < len(made) / 2  # the per-env path: one per env step
    assert made_for_arrays == 0 or task == "CartPole-v1"
    assert as_arrays == per_env


def test_an_async_pool_recv_hands_over_the_pools_arrays_in_the_pools_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pool batch in which no episode ended comes back as the pool gave it: its rows in the pool's order, named by
    ``env_ids``, and its observations the pool's own array (no copy), the ready observations views of it."""
    read: list[Any] = []
    recv = envpool_engine.PoolEngine._recv
    monkeypatch.setattr(envpool_engine.PoolEngine, "_recv", lambda self: read.append(recv(self)) or read[-1])
    manager = EnvPoolEnvManager({"env_id": "CartPole-v1", "env_num": 8, "options": {"batch_size": 4}})
    manager.seed(0)
    manager.async_reset()
    try:
        batch = manager.recv(4)
        whole = 0
        for step in range(300):
            manager.send((np.arange(len(batch.env_ids)) + step) % 2, batch.env_ids)
            batch = manager.recv(4)
            pool_batch = read[-1]
            if batch.obs is pool_batch.obs:  # read as arrays: nothing copied or reordered
                whole += 1
                assert batch.env_ids.tolist() == pool_batch.env_ids.tolist() and batch.env_ids.dtype == np.int64
                assert not batch.done.any() and batch.reward[:, 0].tolist() == pool_batch.reward.tolist()
                for row, env_id in enumerate(batch.env_ids.tolist()):
                    assert np.shares_memory(manager.ready_obs[env_id], pool_batch.obs)
                    assert manager.ready_obs[env_id].tolist() == batch.obs[row].tolist()
        assert whole > 100  # most batches: episodes end every ~20 steps or so
    finally:
        manager.close()


CONFIG = """
from easydict import EasyDict
main_config = EasyDict(dict(
    exp_name='cartpole_dqn_envpool',
    env=dict(collector_env_num=4, evaluator_env_num=2, n_evaluator_episode=2, stop_value=195,
             manager=dict(env_id='CartPole-v1', options=dict(max_episode_steps=200))),
    policy=dict(learn=dict(update_per_collect=5, batch_size=64), collect=dict(n_sample=8),
                eval=dict(evaluator=dict(eval_freq=40)),
                other=dict(eps=dict(type='exp', start=0.95, end=0.1, decay=10000))),
))
create_config = EasyDict(dict(
    env=dict(type='cartpole', import_names=['dizoo.classic_control.cartpole.envs.cartpole_env']),
    env_manager=dict(type='envpool'),
    policy=dict(type='dqn'),
))
"""


@pytest.mark.slow
def test_ding_serial_trains_cartpole_on_an_envpool_manager(tmp_path: pathlib.Path) -> None:
    config = tmp_path / "cartpole_dqn_envpool_config.py"
    config.write_text(CONFIG)
    result = run_ding("-m", "serial", "-c", str(config), "--env-step", "20000", cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "reached stop_value 195" in result.stdout


ASYNC_COLLECTOR_CONFIG = CONFIG.replace(
    "env=dict(collector_env_num=4, evaluator_env_num=2,",
    "env=dict(collector_env_num=16, collector_batch_size=8, evaluator_env_num=2,",
)


def test_di_engines_collector_batch_size_makes_the_collectors_pool_asynchronous(tmp_path: pathlib.Path) -> None:
    """DI-engine's envpool configs give the pool batch per role (``env.collector_batch_size``): the collector's pool
    returns 8 of its 16 envs per step while the evaluator's stays synchronous, and ``ding -m serial`` trains on it."""
    assert "collector_batch_size=8" in ASYNC_COLLECTOR_CONFIG
    config = tmp_path / "cartpole_dqn_envpool_async_config.py"
    config.write_text(ASYNC_COLLECTOR_CONFIG)
    cfg = compile_config(*read_config(config))
    collector, evaluator = create_env_managers(cfg)
    assert collector is not None and evaluator is not None
    try:
        assert collector.partial_batches and not evaluator.partial_batches
        collector.seed(0)
        collector.launch()
        assert len(collector.step({i: 0 for i in collector.ready_obs_id})) == 8
    finally:
        collector.close()
        evaluator.close()
    result = run_ding("-m", "serial", "-c", str(config), "--env-step", "600", cwd=tmp_path, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "env step" in result.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"manager": {"type": "base"}, "collector_batch_size": 4},
            r"env.collector_batch_size is 4, but it sets the batch of an envpool pool and env_manager.type is 'base'",
        ),
        (
            {"manager": {"type": "envpool", "options": {"batch_size": 2}}, "evaluator_batch_size": 4},
            r"env.evaluator_batch_size is 4 and env.manager.options.batch_size is 2: set one of them",
        ),
        (
            {"manager": {"type": "envpool"}, "collector_env_num": 8, "collector_batch_size": 3},
            r"env.collector_batch_size is 3, but the pool's batch must divide env.collector_env_num \(8\)",
        ),
    ],
)
def test_a_role_batch_size_is_refused_where_it_cannot_apply(env: dict[str, object], message: str) -> None:
    role = "collector" if "collector_batch_size" in env else "evaluator"
    with pytest.raises(ConfigError, match=message):
        role_manager_config(env, role)
