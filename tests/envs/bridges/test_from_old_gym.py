"""Old-gym-API envs: a gymnasium.Env subclass with the old methods, given as an instance or by a registered id."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.wrappers import TimeLimit

from ding.envs import DingEnvWrapper
from ding.envs.bridges.from_old_gym import OldGymAPIAdapter, as_gymnasium, is_old_api_class, make_env, registered_spec
from ding.errors import ConfigError, EnvSpecError


class OldHybridEnv(gym.Env):  # type: ignore[type-arg]
    """A gymnasium.Env subclass that implements the old API: reset() -> obs, step() -> 4 values (DI-engine's test)."""

    def __init__(self, episode_len: int = 100) -> None:
        self.observation_space = gym.spaces.Box(-1.0, 1.0, (10,), np.float32)
        self.action_space = gym.spaces.Tuple(
            (
                gym.spaces.Discrete(3),
                gym.spaces.Box(np.array([0.0, -1.0], np.float32), np.array([1.0, 1.0], np.float32), (2,), np.float32),
            )
        )
        self.episode_len = episode_len
        self.seeds: list[int] = []

    def seed(self, seed: int) -> None:
        self.seeds.append(seed)
        self.observation_space.seed(seed)

    def reset(self) -> np.ndarray:  # type: ignore[override]
        self._t = 0
        return self.observation_space.sample()

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, dict[str, Any]]:  # type: ignore[override]
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} not in {self.action_space}")
        self._t += 1
        return self.observation_space.sample(), 0.5, self._t >= self.episode_len, {}

    def render(self, mode: str = "human") -> None:  # type: ignore[override]
        return None


class Gym026Env:
    """Not a gymnasium env, but gym 0.26's API: reset(seed=...) -> (obs, info), step -> 5 values."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[np.ndarray, dict[str, Any]]:
        self.seed_seen = seed
        return np.zeros(1, np.float32), {"start": True}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.ones(1, np.float32), 1.0, False, True, {}


ENTRY = f"{__name__}:OldHybridEnv"


@pytest.fixture
def registered_ids() -> Iterator[tuple[str, str]]:
    """Two ids for the old-API class: one registered with the class, one with a "module:Class" string."""
    by_class, by_string = "DingTestOldHybrid-v0", "DingTestOldHybridByName-v0"
    gym.register(id=by_class, entry_point=OldHybridEnv, max_episode_steps=7)
    gym.register(id=by_string, entry_point=ENTRY, kwargs={"episode_len": 4})
    yield by_class, by_string
    del gym.registry[by_class], gym.registry[by_string]


def play(env: DingEnvWrapper) -> list[Any]:
    env.reset()
    timesteps = []
    while not timesteps or not timesteps[-1].done:
        timesteps.append(env.step(env.random_action()))
    return timesteps


def test_old_api_instance_runs_with_dict_random_actions() -> None:
    raw = OldHybridEnv(episode_len=5)
    env = DingEnvWrapper(raw, cfg={"env_wrapper": "gym_hybrid_default"})
    env.seed(4, dynamic_seed=False)
    timesteps = play(env)
    assert len(timesteps) == 5 and timesteps[-1].terminated and raw.seeds == [4]
    assert timesteps[-1].info["eval_episode_return"].tolist() == [2.5]
    action = env.random_action()
    assert isinstance(action, dict) and action["type"].dtype == np.int64 and action["args"].shape == (2,)


def test_old_api_class_registered_by_id_keeps_its_time_limit(registered_ids: tuple[str, str]) -> None:
    by_class, by_string = registered_ids
    limited = DingEnvWrapper(cfg={"env_id": by_class, "env_wrapper": "gym_hybrid_default"})
    last = play(limited)[-1]
    assert limited.env.spec is not None
    assert (len(play(limited)), last.truncated, last.terminated) == (7, True, False)
    named = DingEnvWrapper(cfg={"env_id": by_string, "env_wrapper": "gym_hybrid_default"})
    assert len(play(named)) == 4 and named.observation_space.shape == (10,)


def test_make_env_adapts_old_api_classes_and_leaves_gymnasium_envs_alone(registered_ids: tuple[str, str]) -> None:
    env = make_env(registered_ids[0])
    assert isinstance(env, TimeLimit) and isinstance(env.env, OldGymAPIAdapter)
    assert isinstance(env.env.old_env, OldHybridEnv)
    obs, info = env.reset(seed=1)
    assert obs.shape == (10,) and info == {}
    cartpole = make_env("CartPole-v1")
    assert type(cartpole.unwrapped).__name__ == "CartPoleEnv" and not isinstance(cartpole.unwrapped, OldGymAPIAdapter)


def test_gymnasium_made_old_api_instance_is_unwrapped_and_adapted(registered_ids: tuple[str, str]) -> None:
    made = gym.make(registered_ids[0])  # env checker, order enforcing and a time limit around the old env
    adapted = as_gymnasium(made)
    assert isinstance(adapted, TimeLimit) and adapted._max_episode_steps == 7
    env = DingEnvWrapper(gym.make(registered_ids[0]), cfg={"env_wrapper": "gym_hybrid_default"})
    assert len(play(env)) == 7


def test_old_api_env_inside_other_wrappers_is_refused() -> None:
    wrapped = gym.wrappers.RecordEpisodeStatistics(OldHybridEnv())
    with pytest.raises(
        TypeError, match=r"OldHybridEnv implements the old gym API .* wrapped in RecordEpisodeStatistics"
    ):
        as_gymnasium(wrapped)


def test_gym_026_api_object_passes_through() -> None:
    raw = Gym026Env()
    adapter = OldGymAPIAdapter(raw)
    assert adapter.reset_takes_seed and adapter.reset(seed=3) == (np.zeros(1, np.float32), {"start": True})
    assert raw.seed_seen == 3
    assert adapter.step(0)[2:4] == (False, True)
    env = DingEnvWrapper(raw)
    env.reset()
    ts = env.step(1)
    assert ts.truncated and ts.done and not ts.terminated


def test_as_gymnasium_rejects_non_envs() -> None:
    with pytest.raises(TypeError, match="expected a gymnasium env or an old-gym-API env"):
        as_gymnasium(object())


def test_atari_ids_are_found_without_importing_ale_py_first() -> None:
    pytest.importorskip("ale_py")
    assert registered_spec("PongNoFrameskip-v4").id == "PongNoFrameskip-v4"
    with pytest.raises(gym.error.NameNotFound):
        registered_spec("NoSuchGame-v0")


def _registered_classes() -> list[tuple[str, Any]]:
    found = []
    for env_id, spec in sorted(gym.registry.items()):
        try:
            creator = spec.entry_point if callable(spec.entry_point) else load_env_creator(str(spec.entry_point))
        except (ImportError, AttributeError, gym.error.Error):  # an optional simulator that is not installed
            continue
        if isinstance(creator, type):
            found.append((env_id, creator))
    return found


def test_no_registered_gymnasium_env_is_taken_for_an_old_api_one() -> None:
    registered_spec("Pong-v4")  # register the ALE ids too
    classes = _registered_classes()
    assert len(classes) > 50 and any(env_id.startswith("ALE/") for env_id, _ in classes)
    assert [env_id for env_id, cls in classes if is_old_api_class(cls)] == []
    assert is_old_api_class(OldHybridEnv) and not is_old_api_class(Gym026Env)


# ----- gym's three APIs, hand-written: read from signatures and returned values, seeds never dropped -----------------
class Gym021Env:
    """gym 0.21: seed(n), reset() -> obs, step -> (obs, reward, done, info); the start depends on the seed."""

    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, limit: int = 3) -> None:
        self.limit = limit
        self.rng = np.random.default_rng()
        self.seeds: list[int] = []

    def seed(self, seed: int | None = None) -> list[int]:
        self.seeds.append(int(seed or 0))
        self.rng = np.random.default_rng(seed)
        return [int(seed or 0)]

    def reset(self) -> np.ndarray:
        self.t = 0
        return self.rng.uniform(-1, 1, 2).astype(np.float32)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, dict[str, Any]]:
        self.t += 1
        done = self.t >= self.limit
        return np.zeros(2, np.float32), 1.0, done, {"TimeLimit.truncated": done} if done else {}


class ForwardingWrapper:
    """gym's wrappers (0.21 and 0.26 alike): reset(**kwargs) passes everything to the env inside."""

    def __init__(self, env: Any) -> None:
        self.env = env
        self.observation_space, self.action_space = env.observation_space, env.action_space

    def reset(self, **kwargs: Any) -> Any:
        return self.env.reset(**kwargs)

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def seed(self, seed: int | None = None) -> Any:
        return self.env.seed(seed)


class Gym025Env(Gym021Env):
    """gym 0.22-0.25: reset(seed=..., return_info=...) -> obs or (obs, info); step still four values."""

    def reset(  # type: ignore[override]
        self, *, seed: int | None = None, return_info: bool = False, options: Any = None
    ) -> Any:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
            self.seeds.append(seed)
        obs = super().reset()
        return (obs, {"return_info": True}) if return_info else obs


class ResetWithoutSeed026Env:
    """gym 0.26 in step and reset's return, but reset() takes no seed and there is no seed(): cannot be seeded."""

    observation_space = gym.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def reset(self) -> tuple[np.ndarray, dict[str, Any]]:
        return np.zeros(1, np.float32), {"fresh": True}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        return np.ones(1, np.float32), 1.0, False, True, {}


PAIR_SPACE = gym.spaces.Tuple((gym.spaces.Discrete(3), gym.spaces.Dict({"x": gym.spaces.Discrete(2)})))


class PairObsOldEnv:
    """gym 0.21 with observations that look like (obs, info) pairs: a Tuple of a Discrete and a Dict."""

    observation_space = PAIR_SPACE
    action_space = gym.spaces.Discrete(2)

    def reset(self) -> tuple[int, dict[str, int]]:
        return 2, {"x": 1}

    def step(self, action: int) -> Any:
        return (1, {"x": 0}), 0.0, True, {}


class PairObs026Env(PairObsOldEnv):
    def reset(self, *, seed: int | None = None, options: Any = None) -> Any:  # type: ignore[override]
        return (2, {"x": 1}), {"seed": seed}


@pytest.mark.parametrize("wrapped", [False, True], ids=["bare", "in_forwarding_wrapper"])
def test_gym_021_env_is_seeded_through_seed_and_truncates_on_time_limits(wrapped: bool) -> None:
    raw = Gym021Env()
    adapter = OldGymAPIAdapter(ForwardingWrapper(raw) if wrapped else raw)
    assert not adapter.reset_takes_seed  # the wrapper's **kwargs lead to a reset() that takes none
    obs, info = adapter.reset(seed=11)
    assert raw.seeds == [11] and info == {}
    assert obs.tolist() == np.random.default_rng(11).uniform(-1, 1, 2).astype(np.float32).tolist()
    assert [adapter.step(0)[2:4] for _ in range(3)] == [(False, False), (False, False), (False, True)]
    env = DingEnvWrapper(ForwardingWrapper(Gym021Env()) if wrapped else Gym021Env())
    env.seed(5, dynamic_seed=False)
    assert np.array_equal(env.reset(), env.reset())  # a fixed seed, honoured at every reset


def test_gym_025_env_is_seeded_through_reset_and_returns_its_info() -> None:
    raw = Gym025Env(limit=1)
    adapter = OldGymAPIAdapter(ForwardingWrapper(raw))
    assert adapter.reset_takes_seed
    obs, info = adapter.reset(seed=4)
    assert raw.seeds == [4] and info == {"return_info": True} and obs.shape == (2,)
    assert adapter.step(1)[2:] == (False, True, {"TimeLimit.truncated": True})


def test_env_that_cannot_take_a_seed_refuses_one_instead_of_dropping_it() -> None:
    adapter = OldGymAPIAdapter(ResetWithoutSeed026Env())
    assert adapter.reset() == (np.zeros(1, np.float32), {"fresh": True})  # a pair, though reset takes no seed
    assert adapter.step(0)[2:4] == (False, True)
    with pytest.raises(TypeError, match=r"cannot seed ResetWithoutSeed026Env with 3: .* seed_api=False"):
        adapter.reset(seed=3)
    with pytest.raises(TypeError, match=r"ResetWithoutSeed026Env.reset takes no options, got options=\{'a': 1\}"):
        adapter.reset(options={"a": 1})
    env = DingEnvWrapper(ResetWithoutSeed026Env())
    env.seed(3)
    with pytest.raises(TypeError, match="cannot seed ResetWithoutSeed026Env"):
        env.reset()
    unseeded = DingEnvWrapper(ResetWithoutSeed026Env(), seed_api=False)
    unseeded.seed(3)
    assert unseeded.reset().tolist() == [0.0] and unseeded.step(0).truncated


def test_tuple_observations_that_look_like_pairs_are_read_by_their_space() -> None:
    assert OldGymAPIAdapter(PairObsOldEnv()).reset() == ((2, {"x": 1}), {})
    assert OldGymAPIAdapter(PairObs026Env()).reset(seed=1) == ((2, {"x": 1}), {"seed": 1})


def test_a_step_that_changes_its_form_is_refused() -> None:
    class Switching(Gym021Env):
        def step(self, action: int) -> Any:  # type: ignore[override]
            self.t += 1
            return (np.zeros(2, np.float32), 0.0, False, {}) if self.t == 1 else (np.zeros(2), 0.0, False, False, {})

    adapter = OldGymAPIAdapter(Switching())
    adapter.reset()
    adapter.step(0)
    with pytest.raises(ValueError, match=r"Switching.step returned 5 values, after 4 before"):
        adapter.step(0)


class EnvOfAnotherId(gym.Env):  # type: ignore[type-arg]
    """Wraps the env registered as ``env_id``, as gymnasium's ``GymV26Environment-v0`` (shimmy) takes its id."""

    def __init__(self, env_id: str) -> None:
        self.inner = gym.make(env_id)
        self.observation_space = self.inner.observation_space
        self.action_space = self.inner.action_space

    def reset(self, *, seed: int | None = None, options: Any = None) -> tuple[Any, dict[str, Any]]:
        return self.inner.reset(seed=seed, options=options)

    def step(self, action: Any) -> Any:
        return self.inner.step(action)


@pytest.fixture
def wrapping_id() -> Iterator[str]:
    gym.register(id="DingTestWrapsAnId-v0", entry_point=EnvOfAnotherId)
    yield "DingTestWrapsAnId-v0"
    del gym.registry["DingTestWrapsAnId-v0"]


def test_env_kwargs_may_name_env_id_for_the_env_itself(wrapping_id: str) -> None:
    env = DingEnvWrapper(cfg={"env_id": wrapping_id, "env_kwargs": {"env_id": "CartPole-v1"}})
    assert env.observation_space.shape == (4,)  # read from the registration, before the env is built
    env.reset()
    assert env.step(0).obs.shape == (4,)
    assert isinstance(env.env.unwrapped, EnvOfAnotherId)
    env.close()


def test_gym_v26_environment_gets_its_env_id() -> None:
    """GymV26Environment-v0 takes the gym id as ``env_id``; without shimmy gymnasium says to install it."""
    cfg = {"env_id": "GymV26Environment-v0", "env_kwargs": {"env_id": "CartPole-v1"}}
    try:
        import shimmy  # noqa: F401
    except ImportError:
        message = r"cannot make env_id 'GymV26Environment-v0': .*pip install \"shimmy\[gym-v26\]\""
        with pytest.raises(EnvSpecError, match=message):
            DingEnvWrapper(cfg=cfg).reset()
        return
    env = DingEnvWrapper(cfg=cfg)
    assert env.reset().shape == (4,)
    env.close()


def test_env_kwargs_cannot_name_gymnasium_makes_own_id() -> None:
    with pytest.raises(ConfigError, match=r"env_kwargs key 'id' \('Pendulum-v1'\) is gymnasium\.make's name"):
        make_env("CartPole-v1", id="Pendulum-v1")
