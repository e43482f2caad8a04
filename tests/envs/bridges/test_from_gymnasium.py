"""DingEnvWrapper on real gymnasium envs and on an old-gym-API env."""

from __future__ import annotations

import os
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import ENV_REGISTRY, DingEnvWrapper, get_vec_env_setting
from ding.envs.bridges.from_old_gym import OldGymAPIAdapter, convert_space
from ding.errors import ConfigError, UnknownNameError


def run_episode(env: DingEnvWrapper, policy: Any = None, limit: int = 1000) -> tuple[list[Any], Any]:
    obs = env.reset()
    rewards = []
    for _ in range(limit):
        ts = env.step(policy(obs) if policy else env.random_action())
        rewards.append(ts.reward)
        obs = ts.obs
        if ts.done:
            return rewards, ts
    raise AssertionError("episode did not end")


def test_env_id_gives_ding_conventions() -> None:
    env = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    assert env.observation_space == spaces.Box(np.array([-1, -1, -8]), np.array([1, 1, 8]), dtype=np.float32)
    env.seed(0)
    rewards, last = run_episode(env)
    assert len(rewards) == 200 and last.truncated and not last.terminated
    assert all(r.shape == (1,) and r.dtype == np.float32 for r in rewards)
    np.testing.assert_allclose(last.info["eval_episode_return"], np.sum(rewards, axis=0), rtol=1e-5)
    env.close()
    env.close()


def test_accepts_env_instance_and_observations_keep_the_declared_dtype() -> None:
    class Float64Env(gym.Env[Any, Any]):
        observation_space = spaces.Box(-1, 1, (2,), np.float64)
        action_space = spaces.Discrete(2)

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
            super().reset(seed=seed)
            return self.np_random.uniform(-1, 1, 2), {}

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            return self.np_random.uniform(-1, 1, 2), 1.0, True, False, {}

    env = DingEnvWrapper(Float64Env())
    assert env.observation_space.dtype == np.float64 and env.reset().dtype == np.float64
    ts = env.step(np.array([1]))
    assert ts.obs.dtype == np.float64 and ts.reward.dtype == env.reward_space.dtype == np.float32
    assert ts.done and ts.terminated and ts.info["eval_episode_return"][0] == 1.0


def test_a_simulator_value_of_another_dtype_is_cast_to_the_declared_one() -> None:
    class SloppyFrames(gym.Env[Any, Any]):
        """Declares uint8 frames, returns Python lists of ints (and float64 arrays after a step)."""

        observation_space = spaces.Box(0, 255, (2, 2), np.uint8)
        action_space = spaces.Discrete(2)

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
            super().reset(seed=seed)
            return [[0, 255], [7, 9]], {}

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            return np.full((2, 2), 3.0), 1, False, False, {}

    env = DingEnvWrapper(SloppyFrames())
    obs = env.reset()
    assert obs.dtype == np.uint8 and obs.tolist() == [[0, 255], [7, 9]]
    ts = env.step(0)
    assert ts.obs.dtype == np.uint8 and ts.obs.tolist() == [[3, 3], [3, 3]] and ts.reward.dtype == np.float32


def test_an_observation_of_the_declared_dtype_passes_without_a_copy() -> None:
    frame = np.zeros((2, 2), np.uint8)

    class Frames(gym.Env[Any, Any]):
        observation_space = spaces.Box(0, 255, (2, 2), np.uint8)
        action_space = spaces.Discrete(2)

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
            return frame, {}

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            return frame, 0.0, False, False, {}

    env = DingEnvWrapper(Frames())
    assert env.reset() is frame and env.step(0).obs is frame


def test_same_seed_same_trajectory_and_dynamic_seed_differs() -> None:
    def first_obs(seed: int, dynamic: bool) -> list[np.ndarray]:
        env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
        env.seed(seed, dynamic_seed=dynamic)
        return [env.reset() for _ in range(3)]

    a, b = first_obs(7, True), first_obs(7, True)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not np.array_equal(a[0], a[1])
    static = first_obs(7, False)
    assert np.array_equal(static[0], static[2])


def test_wrapper_chain_from_config_list() -> None:
    env = DingEnvWrapper(
        cfg={"env_id": "CartPole-v1", "env_wrapper": [{"type": "frame_stack", "kwargs": {"n_frames": 3}}]}
    )
    assert env.observation_space.shape == (3, 4)
    assert env.reset().shape == (3, 4)
    _, last = run_episode(env)
    assert "eval_episode_return" in last.info


def test_bad_config_values_are_named() -> None:
    with pytest.raises(ConfigError, match=r"needs either an env instance or cfg\.env_id"):
        DingEnvWrapper()
    with pytest.raises(ConfigError, match="env_wrapper 'atari' is not a preset"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": "atari"})
    with pytest.raises(UnknownNameError, match="Did you mean 'frame_stack'"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1", "env_wrapper": [{"type": "frame_stak"}]})
    with pytest.raises(ValueError, match="caller must be one of"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, caller="learner")


def test_bad_actions_are_rejected_with_value_and_space() -> None:
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.reset()
    with pytest.raises(ValueError, match=r"action 2 is out of range for Discrete\(2\)"):
        env.step(2)
    with pytest.raises(TypeError, match=r"action 0\.5 is not a single integer"):
        env.step(0.5)
    box = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    box.reset()
    with pytest.raises(ValueError, match=r"action of shape \(3,\) does not fit Box"):
        box.step(np.zeros(3))


def test_evaluator_caller_uses_evaluation_chain() -> None:
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, caller="evaluator")
    assert env._cfg.is_train is False


class OldCounterEnv:
    """An env in the old gym API: reset() -> obs, step() -> (obs, reward, done, info), seed()."""

    def __init__(self) -> None:
        self.observation_space = spaces.Box(0, 10, (1,), np.float32)
        self.action_space = spaces.Discrete(2)
        self.t = 0
        self.seeded: int | None = None

    def seed(self, seed: int) -> None:
        self.seeded = seed

    def reset(self) -> np.ndarray:
        self.t = 0
        return np.zeros(1, np.float32)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, dict[str, Any]]:
        self.t += 1
        done = self.t >= 3
        return np.full(1, self.t, np.float32), 1.0, done, {"TimeLimit.truncated": done}


def test_old_api_env_runs_through_adapter() -> None:
    old = OldCounterEnv()
    env = DingEnvWrapper(old)
    env.seed(5, dynamic_seed=False)
    assert env.reset().tolist() == [0.0] and old.seeded == 5
    rewards, last = run_episode(env)
    assert len(rewards) == 3 and last.truncated and not last.terminated
    assert last.info["eval_episode_return"].tolist() == [3.0]


def test_adapter_errors() -> None:
    with pytest.raises(TypeError, match="needs an object with step"):
        OldGymAPIAdapter(object())

    class ThreeTuple(OldCounterEnv):
        def step(self, action: int) -> Any:  # type: ignore[override]
            return np.zeros(1), 0.0, False

    adapter = OldGymAPIAdapter(ThreeTuple())
    adapter.reset()
    with pytest.raises(ValueError, match=r"ThreeTuple.step returned 3 values; expected 4 .* or 5"):
        adapter.step(0)
    with pytest.raises(TypeError, match="cannot convert space"):
        convert_space(object())


def test_replay_writes_a_video(tmp_path: Any) -> None:
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.enable_save_replay(str(tmp_path))
    env.seed(0)
    run_episode(env)
    env.reset()
    files = sorted(os.listdir(tmp_path))
    assert files == ["replay-episode-0000.mp4"] and os.path.getsize(tmp_path / files[0]) > 1000


def test_registry_and_vec_env_setting() -> None:
    env_fn, collector, evaluator = get_vec_env_setting(
        {"type": "ding_env_wrapper", "env_id": "CartPole-v1", "collector_env_num": 2, "evaluator_env_num": 1}
    )
    assert env_fn is DingEnvWrapper and len(collector or []) == 2 and len(evaluator or []) == 1
    assert ENV_REGISTRY.get("ding_env_wrapper") is DingEnvWrapper
    with pytest.raises(UnknownNameError, match="unknown env 'cartpol'"):
        get_vec_env_setting({"type": "cartpol"})


def test_reset_after_a_lost_life_continues_the_game_even_when_seeded() -> None:
    pytest.importorskip("ale_py")
    import ale_py

    gym.register_envs(ale_py)
    env = DingEnvWrapper(
        cfg={"env_id": "BreakoutNoFrameskip-v4", "env_wrapper": [("max_and_skip", {}), "episodic_life"]}
    )
    ale = env.env.unwrapped.ale  # type: ignore[attr-defined]
    env.seed(3)  # dynamic seeds: every new game gets one, a continued game must not
    env.reset()
    lives = ale.lives()
    while not (ts := env.step(1)).done:
        pass
    assert ts.info["real_done"] is False and ale.lives() == lives - 1
    frame = ale.getEpisodeFrameNumber()
    env.reset()
    assert ale.lives() == lives - 1 and ale.getEpisodeFrameNumber() > frame
    env.seed(3)
    env.reset()
    assert ale.lives() == lives and ale.getEpisodeFrameNumber() == 0
    env.close()


def test_di_engine_constructor_and_config_helpers() -> None:
    env = DingEnvWrapper(env=None, cfg={"env_id": "CartPole-v1"}, seed_api=True, caller="collector", is_gymnasium=True)
    collectors = env.create_collector_env_cfg({"env_id": "CartPole-v1", "collector_env_num": 3})
    evaluators = env.create_evaluator_env_cfg({"env_id": "CartPole-v1", "evaluator_env_num": 2})
    assert [c.is_train for c in collectors] == [True] * 3 and [e.is_train for e in evaluators] == [False] * 2
    evaluator = DingEnvWrapper(cfg=evaluators[0], caller="evaluator")
    assert evaluator._cfg.is_train is False
    with pytest.raises(TypeError, match="is_gymnasium must be a bool, got str 'yes'"):
        DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, is_gymnasium="yes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("key", "instead"), [("act_scale", "'normalized_action' wrapper"), ("rew_clip", r"\('clip_reward'")]
)
def test_di_engine_only_keys_name_the_wrapper_to_use(key: str, instead: str) -> None:
    with pytest.raises(ConfigError, match=rf"DingEnvWrapper has no config key '{key}' .*{instead}"):
        DingEnvWrapper(cfg={"env_id": "Pendulum-v1", key: True})
    assert key not in DingEnvWrapper(cfg={"env_id": "Pendulum-v1", key: False})._cfg  # DI-engine's default: no-op


def test_random_action_forms() -> None:
    discrete = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    discrete.seed(0)
    action = discrete.random_action()
    assert action.shape == (1,) and action.dtype == np.int64
    box = DingEnvWrapper(cfg={"env_id": "Pendulum-v1"})
    assert box.random_action().shape == (1,) and box.random_action().dtype == np.float32

    class DictActions(gym.Env[Any, Any]):
        observation_space = spaces.Box(-1, 1, (2,), np.float32)
        action_space = spaces.Dict({"move": spaces.Discrete(4), "force": spaces.Box(-1, 1, (3,), np.float32)})

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
            super().reset(seed=seed)
            return np.zeros(2, np.float32), {}

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            assert self.action_space.contains(action)
            return np.zeros(2, np.float32), 0.0, True, False, {}

    env = DingEnvWrapper(DictActions())
    action = env.random_action()
    assert set(action) == {"move", "force"}
    assert (action["move"].shape, action["move"].dtype, action["force"].shape) == ((), np.int64, (3,))
    env.reset()
    assert env.step(action).done


def test_clone_is_independent_and_follows_the_caller() -> None:
    original = DingEnvWrapper(gym.make("CartPole-v1"), cfg={"env_wrapper": [("frame_stack", {"n_frames": 2})]})
    clone = original.clone(caller="evaluator")
    assert clone.env is not original.env and clone.env.unwrapped is not original.env.unwrapped
    assert clone._cfg.is_train is False and original._cfg.is_train is True
    assert clone.observation_space == original.observation_space and clone.observation_space.shape == (2, 4)
    original.seed(5, dynamic_seed=False)
    clone.seed(5, dynamic_seed=False)
    assert np.array_equal(original.reset(), clone.reset())
    clone.step(0)
    clone.step(0)
    assert original.step(1).obs[-1].tolist() != clone.step(1).obs[-1].tolist()
    by_id = DingEnvWrapper(cfg={"env_id": "CartPole-v1"}, caller="evaluator").clone()
    assert by_id._cfg.is_train is True and by_id._caller == "collector"


def test_clone_of_an_env_that_cannot_be_copied_is_made_from_its_spec() -> None:
    import threading

    env = gym.make("CartPole-v1")
    env.unwrapped.lock = threading.Lock()  # type: ignore[attr-defined]  # deepcopy fails on locks
    clone = DingEnvWrapper(env).clone()
    assert clone.env.spec is not None and clone.env.spec.id == "CartPole-v1"
    assert not hasattr(clone.env.unwrapped, "lock")

    class Unmade(gym.Env[Any, Any]):
        observation_space = spaces.Box(-1, 1, (2,), np.float32)
        action_space = spaces.Discrete(2)

        def __init__(self) -> None:
            self.lock = threading.Lock()

        def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
            return np.zeros(2, np.float32), {}

        def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
            return np.zeros(2, np.float32), 0.0, True, False, {}

    with pytest.raises(TypeError, match=r"cannot clone Unmade: it cannot be deep-copied .* has no gymnasium spec"):
        DingEnvWrapper(Unmade()).clone()


def test_enable_save_replay_defaults_to_video_dir(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = DingEnvWrapper(cfg={"env_id": "CartPole-v1"})
    env.enable_save_replay()
    env.seed(0)
    run_episode(env)
    env.reset()
    assert os.listdir(tmp_path / "video") == ["replay-episode-0000.mp4"]


def test_env_kwargs_may_hold_lists_and_dicts() -> None:
    """Issue F9: the cached probe of a registered id keys its cache with unhashable kwargs too."""
    desc = ["SFFF", "FHFH", "FFFH", "HFFG"]
    env = DingEnvWrapper(cfg={"env_id": "FrozenLake-v1", "env_kwargs": {"desc": desc, "is_slippery": False}})
    assert env.observation_space.n == 16 and env.action_space.n == 4
    env.seed(0)
    env.reset()
    assert env.step(2).done is False  # right, from the start: a frozen tile
    env.close()
    other = DingEnvWrapper(cfg={"env_id": "FrozenLake-v1", "env_kwargs": {"desc": ["SF", "HG"]}})
    assert other.observation_space.n == 4, "a different desc is a different cache entry"
    other.close()
