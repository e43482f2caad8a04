"""ManagerVectorEnv: a ding env manager driven through gymnasium's vector env API."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space
from gymnasium.wrappers.vector import RecordEpisodeStatistics

from ding.envs.env_manager import AsyncSubprocessEnvManager, BaseEnvManager, create_env_manager
from ding.envs.env_manager.vector import ManagerVectorEnv, make_vector_env
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from dizoo.classic_control.pendulum.envs import PendulumEnv
from tests.envs.env_manager.fault_envs import FaultyEnv

KINDS = ["base", "subprocess"]
CARTPOLE_RESET_BOUND = 0.05  # CartPole starts every state variable in [-0.05, 0.05]
THETA_LIMIT = 12 * 2 * np.pi / 360
X_LIMIT = 2.4


SAME_STEP = AutoresetMode.SAME_STEP


def manager_cfg(kind: str, **cfg: Any) -> dict[str, Any]:
    if kind == "subprocess":
        cfg.setdefault("envs_per_worker", 2)
    return {"type": kind, **cfg}


def cartpole_fns(num: int, **env_cfg: Any) -> list[Any]:
    return [partial(CartPoleEnv, cfg=env_cfg) for _ in range(num)]


@pytest.fixture
def vector_env(request: pytest.FixtureRequest) -> Iterator[ManagerVectorEnv]:
    kind, num = request.param
    with make_vector_env(manager_cfg(kind), cartpole_fns(num)) as envs:
        yield envs


def random_actions(steps: int, num: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2, size=(steps, num))


# ----- spaces and batching ---------------------------------------------------------------------------
@pytest.mark.parametrize("vector_env", [(kind, 3) for kind in KINDS], indirect=True)
def test_spaces_and_batched_step(vector_env: ManagerVectorEnv) -> None:
    envs = vector_env
    assert envs.num_envs == 3
    assert envs.single_observation_space == CartPoleEnv.spaces_from_config({}).observation
    assert envs.single_action_space == spaces.Discrete(2)
    assert envs.observation_space == batch_space(envs.single_observation_space, 3)
    assert envs.action_space == spaces.MultiDiscrete([2, 2, 2])
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP  # gymnasium's default

    obs, infos = envs.reset(seed=0)
    assert infos == {}
    assert obs.shape == (3, 4) and obs.dtype == np.float32 and obs in envs.observation_space
    obs, rewards, terminations, truncations, infos = envs.step(np.array([0, 1, 0]))
    assert obs.shape == (3, 4) and obs in envs.observation_space
    assert rewards.shape == (3,) and rewards.dtype == envs.manager.env_spaces.reward.dtype == np.float32
    np.testing.assert_array_equal(rewards, [1.0, 1.0, 1.0])
    assert terminations.dtype == np.bool_ and truncations.dtype == np.bool_
    assert not terminations.any() and not truncations.any()
    assert infos == {}


def test_box_actions_are_split_into_rows() -> None:
    with make_vector_env({"type": "base"}, [partial(PendulumEnv, cfg={}) for _ in range(2)]) as envs:
        assert envs.action_space == batch_space(spaces.Box(-1.0, 1.0, (1,), np.float32), 2)
        envs.reset(seed=0)
        obs, rewards, *_ = envs.step(np.array([[-1.0], [1.0]], dtype=np.float32))
        assert obs.shape == (2, 3) and rewards.shape == (2,)
        assert rewards[0] != rewards[1]  # each env got its own torque
        with pytest.raises(ValueError, match=re.escape("must have shape (2, 1)")):
            envs.step(np.zeros(2, dtype=np.float32))


@pytest.mark.parametrize("copy", [True, False])
def test_copy_controls_whether_shared_memory_is_returned(copy: bool) -> None:
    cfg = manager_cfg("subprocess", copy_on_get=False)  # the manager hands out views of its shared memory
    with make_vector_env(cfg, cartpole_fns(2), copy=copy, autoreset_mode=SAME_STEP) as envs:
        results = [envs.reset(seed=0)[0]]
        at_reset = results[0].copy()
        for _ in range(2):
            results.append(envs.step(np.array([1, 1]))[0])
        shared = [np.shares_memory(a, b) for a, b in itertools.pairwise(results)]
        values = [obs.copy() for obs in results]
        infos: dict[str, Any] = {}
        while "final_obs" not in infos:
            *_, infos = envs.step(np.array([1, 1]))
        final_owned = [obs.flags.owndata for obs in infos["final_obs"] if obs is not None]
        del results, infos  # views of shared memory must not outlive the manager
    assert final_owned and all(owned is copy for owned in final_owned)
    if copy:
        assert shared == [False, False]
        np.testing.assert_array_equal(values[0], at_reset)  # later steps left earlier results alone
        assert not np.array_equal(values[1], values[2])
    else:
        assert shared == [True, True]
        np.testing.assert_array_equal(values[0], values[2])  # every result shows the current observations


def test_base_manager_observations_are_not_copied_again() -> None:
    manager = BaseEnvManager(cartpole_fns(2))
    with ManagerVectorEnv(manager) as envs:
        obs, _ = envs.reset(seed=0)
        assert obs.flags.owndata  # the stacked batch itself, not a copy of a view
        manager_batch = manager.ready_obs_batch().obs
        np.testing.assert_array_equal(obs, manager_batch)


# ----- seeding ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_gives_the_trajectory_of_the_manager_stepped_directly(kind: str) -> None:
    actions = random_actions(80, 3)
    with make_vector_env(manager_cfg(kind), cartpole_fns(3), autoreset_mode=SAME_STEP) as envs:
        obs, _ = envs.reset(seed=7)
        adapter_obs, adapter_done = [obs], []
        for row in actions:
            obs, _, terminations, truncations, _ = envs.step(row)
            adapter_obs.append(obs)
            adapter_done.append(terminations | truncations)

    with create_env_manager(manager_cfg(kind), cartpole_fns(3)) as manager:
        manager.seed(7)
        manager.launch()
        direct_obs, direct_done = [manager.ready_obs_batch().obs.copy()], []
        for row in actions:
            timesteps = manager.step({i: int(a) for i, a in enumerate(row)})
            direct_obs.append(manager.ready_obs_batch().obs.copy())
            direct_done.append(np.array([timesteps[i].done for i in range(3)]))

    np.testing.assert_array_equal(np.stack(adapter_obs), np.stack(direct_obs))
    np.testing.assert_array_equal(np.stack(adapter_done), np.stack(direct_done))
    assert np.stack(adapter_done).any()  # the comparison covered automatic resets


def test_seeds_are_per_env_and_reproducible() -> None:
    with make_vector_env({"type": "base"}, cartpole_fns(2)) as envs:
        first, _ = envs.reset(seed=3)
        first = first.copy()
        other, _ = envs.reset(seed=4)
        np.testing.assert_array_equal(other[0], first[1])  # int seed s gives env i the seed s + i
        again, _ = envs.reset(seed=[3, 4])
        np.testing.assert_array_equal(again, first)
        with pytest.raises(ValueError, match="one entry per env \\(2\\), got 3"):
            envs.reset(seed=[1, 2, 3])


# ----- autoreset -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("cfg", [{}, {"auto_reset": False}, {"episode_num": 1}], ids=["auto", "manual", "episode1"])
def test_termination_returns_next_episode_obs_and_final_obs_in_infos(kind: str, cfg: dict[str, Any]) -> None:
    with make_vector_env(manager_cfg(kind, **cfg), cartpole_fns(2), autoreset_mode=SAME_STEP) as envs:
        obs, _ = envs.reset(seed=0)
        # env 0 pushes right until the pole falls; env 1 alternates and stays up meanwhile
        for t in range(1, 100):
            obs, rewards, terminations, truncations, infos = envs.step(np.array([1, t % 2]))
            if terminations[0]:
                break
        else:
            pytest.fail("pushing one way never ended the CartPole episode")
        assert not terminations[1] and not truncations.any()
        np.testing.assert_array_equal(infos["_final_obs"], [True, False])
        np.testing.assert_array_equal(infos["_final_info"], [True, False])
        final = infos["final_obs"][0]
        assert abs(final[0]) > X_LIMIT or abs(final[2]) > THETA_LIMIT  # the obs that ended the episode
        assert infos["final_obs"][1] is None
        assert np.all(np.abs(obs[0]) <= CARTPOLE_RESET_BOUND)  # the new episode's first obs
        assert infos["final_info"]["eval_episode_return"][0] == pytest.approx([t])
        assert rewards[0] == 1.0

        obs_next, _, terminations, _, infos = envs.step(np.array([0, 0]))
        assert not terminations[0] and "final_obs" not in infos  # the new episode goes on
        assert not np.array_equal(obs_next[0], obs[0])


@pytest.mark.parametrize("kind", KINDS)
def test_truncation_by_time_limit(kind: str) -> None:
    with make_vector_env(manager_cfg(kind), cartpole_fns(2, max_episode_steps=4), autoreset_mode=SAME_STEP) as envs:
        envs.reset(seed=1)
        for _ in range(3):
            _, _, terminations, truncations, infos = envs.step(np.array([0, 1]))
            assert not truncations.any() and "final_obs" not in infos
        obs, _, terminations, truncations, infos = envs.step(np.array([0, 1]))
        np.testing.assert_array_equal(truncations, [True, True])
        np.testing.assert_array_equal(terminations, [False, False])
        assert infos["_final_obs"].all()
        assert np.all(np.abs(obs) <= CARTPOLE_RESET_BOUND)


def test_faulty_step_ends_the_episode_as_a_truncation() -> None:
    fns = [partial(FaultyEnv, cfg={"fault": "raise" if i == 1 else None, "at_step": 2}) for i in range(2)]
    with make_vector_env({"type": "base", "max_retry": 2}, fns, autoreset_mode=SAME_STEP) as envs:
        envs.reset()
        envs.step(np.array([0, 0]))
        obs, _, terminations, truncations, infos = envs.step(np.array([0, 0]))
        np.testing.assert_array_equal(truncations, [False, True])
        assert not terminations.any()
        np.testing.assert_array_equal(infos["final_info"]["_abnormal"], [False, True])
        assert "InjectedFault" in infos["final_info"]["error"][1]
        assert obs[1, 0] == 0  # env 1 restarted its episode
    with make_vector_env({"type": "subprocess", "max_retry": 2}, fns) as envs:  # NEXT_STEP
        envs.reset()
        envs.step(np.array([0, 0]))
        obs, _, terminations, truncations, infos = envs.step(np.array([0, 0]))
        np.testing.assert_array_equal(truncations, [False, True])
        np.testing.assert_array_equal(infos["_abnormal"], [False, True])
        assert obs[1, 0] == 1  # the observation before the failed step
        obs, rewards, _, truncations, _ = envs.step(np.array([0, 0]))
        assert obs[1, 0] == 0 and rewards[1] == 0 and not truncations[1]  # env 1 started over


# ----- a training-style loop -------------------------------------------------------------------------
@pytest.mark.parametrize("mode", list(AutoresetMode), ids=[m.value for m in AutoresetMode])
@pytest.mark.parametrize("kind", KINDS)
def test_cleanrl_style_loop_records_episode_statistics(kind: str, mode: AutoresetMode) -> None:
    num_envs, steps = 4, 500
    adapter = make_vector_env(manager_cfg(kind), cartpole_fns(num_envs), autoreset_mode=mode)
    envs = RecordEpisodeStatistics(adapter)
    recorded: list[tuple[float, int]] = []
    counted: list[int] = []
    running = np.zeros(num_envs, dtype=int)
    starting = np.zeros(num_envs, dtype=bool)  # NEXT_STEP: envs whose next step starts a new episode
    taken = 0  # env steps that moved an episode on
    rng = np.random.default_rng(0)
    try:
        obs, _ = envs.reset(seed=1)
        for _ in range(steps):
            actions = rng.integers(0, 2, size=num_envs)
            obs, rewards, terminations, truncations, infos = envs.step(actions)
            assert not rewards[starting].any()
            running[~starting] += 1
            taken += int((~starting).sum())
            dones = terminations | truncations
            counted.extend(running[dones].tolist())
            running[dones] = 0
            if "episode" in infos:
                for i in np.flatnonzero(infos["_episode"]):
                    recorded.append((float(infos["episode"]["r"][i]), int(infos["episode"]["l"][i])))
            assert obs in envs.observation_space
            if mode is AutoresetMode.DISABLED and dones.any():
                obs, _ = envs.reset(options={"reset_mask": dones})
            starting = dones if mode is AutoresetMode.NEXT_STEP else np.zeros(num_envs, dtype=bool)
    finally:
        envs.close()
    assert adapter.closed and adapter.manager.closed
    assert len(recorded) > 20  # random CartPole episodes last about 20 steps
    returns, lengths = zip(*recorded, strict=True)
    assert returns == tuple(float(n) for n in lengths)
    assert sorted(lengths) == sorted(counted)  # every step belongs to exactly one recorded episode
    assert sum(lengths) + running.sum() == taken


# ----- errors ----------------------------------------------------------------------------------------
def test_async_manager_is_rejected() -> None:
    manager = AsyncSubprocessEnvManager(cartpole_fns(2))
    try:
        with pytest.raises(TypeError, match=r"'base' or 'subprocess'.*AsyncSubprocessEnvManager"):
            ManagerVectorEnv(manager)
    finally:
        manager.close()
    with pytest.raises(TypeError, match="'async_subprocess'"):
        make_vector_env({"type": "async_subprocess"}, cartpole_fns(2))


@pytest.mark.parametrize("vector_env", [("base", 3)], indirect=True)
def test_bad_actions_name_the_expected_shape(vector_env: ManagerVectorEnv) -> None:
    envs = vector_env
    envs.reset(seed=0)
    for bad in (np.zeros(2, dtype=int), np.zeros((3, 1), dtype=int), np.zeros(4, dtype=int)):
        with pytest.raises(ValueError, match=re.escape("must have shape (3,)")):
            envs.step(bad)
    with pytest.raises(TypeError, match=r"one row per env \(3 rows of Discrete\(2\)\), got 0"):
        envs.step(0)  # a single value, as gymnasium's vector envs refuse it
    with pytest.raises(TypeError, match=r"env 0.*not a single integer"):
        envs.step(np.zeros(3))
    with pytest.raises(ValueError, match="out of range"):
        envs.step(np.array([0, 2, 0]))
    envs.step(np.array([0, 1, 0]))  # the rejected batches moved no env


def test_reset_mask_resets_only_the_masked_envs() -> None:
    with make_vector_env({"type": "base"}, cartpole_fns(3)) as envs:
        start, _ = envs.reset(seed=0)
        start = start.copy()
        moved, *_ = envs.step(np.array([1, 1, 1]))
        obs, _ = envs.reset(seed=0, options={"reset_mask": np.array([False, True, False])})
        np.testing.assert_array_equal(obs[1], start[1])
        np.testing.assert_array_equal(obs[[0, 2]], moved[[0, 2]])


def test_close_closes_the_manager_and_is_idempotent() -> None:
    manager = create_env_manager(manager_cfg("subprocess"), cartpole_fns(2))
    envs = ManagerVectorEnv(manager)
    envs.reset(seed=0)
    pids = [pid for pid in manager.worker_pids if pid is not None]
    assert pids
    envs.close()
    envs.close()
    assert envs.closed and manager.closed
    assert all(pid is None for pid in manager.worker_pids)
    again = ManagerVectorEnv(manager)  # a closed manager launches afresh
    obs, _ = again.reset(seed=0)
    assert obs.shape == (2, 4) and manager.launched
    again.close()
