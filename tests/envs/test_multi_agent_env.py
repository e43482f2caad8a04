"""``ParallelEnvWrapper`` over real PettingZoo envs: MPE (same and different agent spaces) and Knights-Archers-Zombies.

KAZ with ``line_death=True`` lets an agent leave mid-episode deterministically: a knight that keeps moving up
(action 0) dies at the top wall after 24 steps while the others stay (action 5 does nothing).
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("mpe2")

from mpe2 import simple_spread_v3

from ding.envs.checks.env_checker import check_ding_env
from ding.envs.conformance import check_value_in_space
from ding.envs.multi_agent import ParallelEnvWrapper, ParallelEpisodeStatistics
from ding.errors import ConfigError

SPREAD = {"env_id": "mpe2.simple_spread_v3", "env_kwargs": {"max_cycles": 10}}
ADVERSARY = {"env_id": "mpe2.simple_adversary_v3", "env_kwargs": {"max_cycles": 10}}
KAZ = {
    "env_id": "pettingzoo.butterfly.knights_archers_zombies_v11",
    "env_kwargs": {"line_death": True, "max_cycles": 40},
}
KNIGHT_UP = np.array([5, 5, 0, 5])  # archer_0, archer_1, knight_0 (moves up to its death), knight_1
KNIGHT_DIES_AT = 23  # the step (from 0) in which knight_0 reaches the wall


def assert_in(value: Any, space: Any, what: str) -> None:
    reason = check_value_in_space(value, space, what)
    assert reason is None, reason


def play(env: ParallelEnvWrapper, actions: Any, seed: int = 0) -> list[Any]:
    env.seed(seed, dynamic_seed=False)
    env.reset()
    timesteps = []
    while not timesteps or not timesteps[-1].done:
        timesteps.append(env.step(actions(len(timesteps)) if callable(actions) else actions))
    return timesteps


@pytest.mark.parametrize(
    "cfg",
    [
        SPREAD,
        {**SPREAD, "agent_obs_only": True, "joint_action": True, "shared_reward": True},
        {**SPREAD, "agent_specific_global_state": True, "env_kwargs": {"max_cycles": 10, "continuous_actions": True}},
        ADVERSARY,
        KAZ,
    ],
    ids=["spread", "spread-joint", "spread-continuous", "adversary", "kaz"],
)
def test_conforms_to_ding_env_rules(cfg: dict[str, Any]) -> None:
    check_ding_env(ParallelEnvWrapper, cfg, steps=50)


def test_spaces_from_the_config_are_the_built_envs_and_its_values() -> None:
    predicted = ParallelEnvWrapper.spaces_from_config(SPREAD)
    assert predicted.observation["agent_state"].shape == (3, 18)
    assert predicted.observation["global_state"].shape == (54,)  # simple_spread's state()
    assert predicted.observation["action_mask"].shape == (3, 5)
    assert predicted.action.nvec.tolist() == [5, 5, 5] and predicted.reward.shape == (3,)
    with ParallelEnvWrapper(cfg=SPREAD) as env:
        assert (env.observation_space, env.action_space, env.reward_space) == tuple(predicted)
        assert env.agents == ("agent_0", "agent_1", "agent_2")
        for ts in play(env, lambda t: env.random_action()):
            assert_in(ts.obs, predicted.observation, "obs")
            assert_in(ts.reward, predicted.reward, "reward")


def test_different_agent_spaces_give_dicts_by_agent() -> None:
    spaces_ = ParallelEnvWrapper.spaces_from_config(ADVERSARY)
    agent_state = spaces_.observation["agent_state"]
    assert {name: space.shape for name, space in agent_state.spaces.items()} == {
        "adversary_0": (8,),
        "agent_0": (10,),
        "agent_1": (10,),
    }
    assert spaces_.observation["global_state"].shape == (28,)


def test_rewards_per_agent_and_shared_sum_agree() -> None:
    with ParallelEnvWrapper(cfg=SPREAD) as per_agent, ParallelEnvWrapper(cfg={**SPREAD, "shared_reward": True}) as team:
        actions = lambda t: np.array([t % 5, (t + 1) % 5, (t + 2) % 5])  # noqa: E731
        separate, shared = play(per_agent, actions), play(team, actions)
    assert len(separate) == len(shared) == 10
    for a, b in zip(separate, shared, strict=True):
        assert b.reward.shape == (1,) and b.reward[0] == pytest.approx(a.reward.sum(), rel=1e-6)
    assert shared[-1].info["eval_episode_return"][0] == pytest.approx(sum(ts.reward[0] for ts in shared), rel=1e-5)


def test_joint_action_moves_each_agent_as_its_digit_says() -> None:
    joint = {**SPREAD, "agent_obs_only": True, "joint_action": True}
    with ParallelEnvWrapper(cfg=joint) as by_joint, ParallelEnvWrapper(cfg=SPREAD) as by_rows:
        moves = [np.array([t % 5, 4 - t % 5, (2 * t) % 5]) for t in range(10)]
        a = play(by_joint, lambda t: int(np.ravel_multi_index(moves[t], (5, 5, 5))))
        b = play(by_rows, lambda t: moves[t])
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x.obs, y.obs["agent_state"])


def test_actions_by_agent_name_equal_rows() -> None:
    with ParallelEnvWrapper(cfg=SPREAD) as env:
        by_name = play(env, lambda t: {"agent_2": 1, "agent_0": 3, "agent_1": t % 5})
        by_rows = play(env, lambda t: np.array([3, t % 5, 1]))
    for x, y in zip(by_name, by_rows, strict=True):
        np.testing.assert_array_equal(x.obs["agent_state"], y.obs["agent_state"])


def test_an_agent_leaving_mid_episode_keeps_defined_rows_and_is_ignored() -> None:
    with ParallelEnvWrapper(cfg=KAZ) as env:
        timesteps = play(env, KNIGHT_UP)
        spaces_ = env.observation_space
    gone = timesteps[KNIGHT_DIES_AT]
    assert timesteps[KNIGHT_DIES_AT - 1].info["alive"].tolist() == [True] * 4
    assert gone.info["alive"].tolist() == [True, True, False, True] and not gone.done
    assert np.abs(gone.obs["agent_state"][2]).sum() > 0  # its last observation, in the step it leaves
    for ts in timesteps[KNIGHT_DIES_AT + 1 : -1]:
        assert_in(ts.obs, spaces_, "obs")
        assert not ts.obs["agent_state"][2].any() and ts.reward[2] == 0.0
        assert ts.obs["alive"].tolist() == [1.0, 1.0, 0.0, 1.0]
        assert ts.obs["action_mask"][2].tolist() == [0.0] * 6 and ts.obs["action_mask"][0].tolist() == [1.0] * 6
    last = timesteps[-1]
    assert len(timesteps) == 40 and last.done and last.truncated and not last.terminated
    assert last.info["alive"].tolist() == [False] * 4
    assert last.info["episode"]["l"].tolist() == [40, 40, KNIGHT_DIES_AT + 1, 40]


def test_actions_of_an_agent_that_left_are_ignored() -> None:
    """Any action, even one out of the agent's range, for an agent that left changes nothing."""
    with ParallelEnvWrapper(cfg=KAZ) as env:
        base = play(env, KNIGHT_UP)
        other = play(env, lambda t: KNIGHT_UP if t <= KNIGHT_DIES_AT else np.array([5, 5, 4, 5]))
    for x, y in zip(base, other, strict=True):
        np.testing.assert_array_equal(x.obs["agent_state"], y.obs["agent_state"])
    with ParallelEnvWrapper(cfg=KAZ) as env:
        env.reset()
        with pytest.raises(ValueError, match=r"element 2 is 9, accepted \[0, 5\]"):
            env.step({"archer_0": 5, "archer_1": 5, "knight_0": 9, "knight_1": 5})


def test_per_agent_statistics_in_the_final_info() -> None:
    with ParallelEnvWrapper(cfg=SPREAD) as env:
        timesteps = play(env, lambda t: np.array([t % 5, 2, 4]))
    rewards = np.stack([ts.reward for ts in timesteps])
    episode = timesteps[-1].info["episode"]
    np.testing.assert_allclose(episode["r"], rewards.sum(axis=0), rtol=1e-5)
    assert episode["l"].tolist() == [10, 10, 10] and episode["t"] >= 0
    assert timesteps[-1].info["eval_episode_return"] == pytest.approx([rewards.sum()], rel=1e-5)
    assert all("episode" not in ts.info and "eval_episode_return" not in ts.info for ts in timesteps[:-1])


def test_statistics_wrapper_records_each_agent_as_it_leaves() -> None:
    from pettingzoo.butterfly import knights_archers_zombies_v11

    env = ParallelEpisodeStatistics(knights_archers_zombies_v11.parallel_env(line_death=True, max_cycles=30), 2)
    for episode in range(3):
        env.reset(seed=episode)
        while env.agents:
            infos = env.step({agent: 0 if agent == "knight_0" else 5 for agent in env.agents})[-1]
            if "knight_0" in infos and "episode" in infos["knight_0"]:
                assert infos["knight_0"]["episode"]["l"] == KNIGHT_DIES_AT + 1
        assert infos["archer_0"]["episode"]["l"] == 30
    assert list(env.length_queue) == [30, 30] and len(env.return_queue) == 2  # deque_size 2
    assert env.possible_agents == ["archer_0", "archer_1", "knight_0", "knight_1"]  # passed through
    env.close()
    with pytest.raises(ValueError, match="deque_size must be an int >= 1, got 0"):
        ParallelEpisodeStatistics(env.env, 0)


def test_same_seed_same_episode_and_dynamic_seeds_differ() -> None:
    with ParallelEnvWrapper(cfg=SPREAD) as a, ParallelEnvWrapper(cfg=SPREAD) as b:
        first = play(a, np.array([1, 2, 3]), seed=7)
        again = play(b, np.array([1, 2, 3]), seed=7)
        np.testing.assert_array_equal(first[-1].obs["agent_state"], again[-1].obs["agent_state"])
        a.seed(7)
        starts = [a.reset()["agent_state"] for _ in range(3)]
    assert not np.array_equal(starts[0], starts[1])


def test_env_fn_instead_of_a_config() -> None:
    with ParallelEnvWrapper(partial(simple_spread_v3.parallel_env, N=2, max_cycles=3), {"shared_reward": True}) as env:
        assert env.observation_space["agent_state"].shape == (2, 12) and env.reward_space.shape == (1,)
        assert len(play(env, np.array([0, 0]))) == 3
        clone = env.clone("evaluator")
        assert clone.observation_space == env.observation_space and not clone._cfg.is_train
        clone.close()
    assert ParallelEnvWrapper.config_of_call((simple_spread_v3.parallel_env,), {}) is None
    assert ParallelEnvWrapper.config_of_call((), {"cfg": SPREAD, "caller": "evaluator"})["is_train"] is False


def test_env_wrapper_chain_applies_to_the_packed_env() -> None:
    cfg = {**SPREAD, "agent_obs_only": True, "env_wrapper": [("frame_stack", {"n_frames": 2})]}
    assert ParallelEnvWrapper.spaces_from_config(cfg).observation.shape == (2, 3, 18)
    with ParallelEnvWrapper(cfg=cfg) as env:
        assert play(env, np.array([0, 1, 2]))[-1].obs.shape == (2, 3, 18)


def test_save_replay_records_the_episode(tmp_path: Any) -> None:
    with ParallelEnvWrapper(cfg=SPREAD) as env:
        env.enable_save_replay(str(tmp_path))
        play(env, np.array([1, 1, 1]))
        env.reset()
    assert [path.name for path in tmp_path.iterdir()] == ["replay-episode-0000.mp4"]


@pytest.mark.parametrize(
    ("cfg", "match"),
    [
        ({**SPREAD, "env_wrapper": "default"}, "reports info\\['eval_episode_return'\\] itself"),
        ({"env_id": "mpe2.simple_sprad_v3"}, "cannot import module 'mpe2.simple_sprad_v3'"),
        ({"env_id": "mpe2:no_factory"}, "module 'mpe2' has no callable 'no_factory'"),
        ({"env_id": None}, "env_id must name a ParallelEnv factory"),
        ({**SPREAD, "shared_reward": 1}, "shared_reward must be a bool, got 1"),
        ({**SPREAD, "joint_action": True, "env_kwargs": {"continuous_actions": True}}, "joint_action needs a Discrete"),
        ({**SPREAD, "env_kwargs": [1]}, "env_kwargs' must be a dict"),
        ({**SPREAD, "n_agents": 3}, "n_agents"),
    ],
)
def test_bad_configs_are_refused_before_anything_runs(cfg: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        ParallelEnvWrapper.spaces_from_config(cfg)
    with pytest.raises(ConfigError, match=match):
        ParallelEnvWrapper(cfg=cfg)


def test_env_fn_must_be_callable() -> None:
    with pytest.raises(TypeError, match="env_fn must be a callable returning a ParallelEnv, got dict"):
        ParallelEnvWrapper({"env_id": "x"})  # type: ignore[arg-type]
