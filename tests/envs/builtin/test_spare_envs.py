"""``SpareEnvs``: slow resets hidden by spare instances, replayable seeds, background errors, every manager."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any, ClassVar

import numpy as np
import pytest

from ding.envs import ENV_REGISTRY, BaseEnv, BaseEnvTimestep, EnvSpaces, SpareEnvs, with_spare_envs
from ding.envs.env_manager import create_env_manager
from ding.envs.from_config import env_class
from ding.errors import ConfigError
from dizoo.classic_control.cartpole.envs import CartPoleEnv

RESET_SLEEP = 0.05


class InjectedResetFault(RuntimeError):
    """What a SlowResetCartPole raises on purpose."""


class SlowResetCartPole(BaseEnv):
    """The dizoo CartPole whose reset first sleeps ``reset_sleep`` s; its ``fail_at_reset``-th reset raises."""

    config: ClassVar[dict[str, Any]] = {"reset_sleep": RESET_SLEEP, "fail_at_reset": 0}

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return CartPoleEnv.spaces_from_config({})

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg)
        self._env = CartPoleEnv({})
        self.resets = 0

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        self._env.seed(seed, dynamic_seed)

    def reset(self) -> Any:
        self.resets += 1
        time.sleep(self._cfg.reset_sleep)
        if self.resets == self._cfg.fail_at_reset:
            raise InjectedResetFault(f"injected failure at reset {self.resets}")
        return self._env.reset()

    def step(self, action: Any) -> BaseEnvTimestep:
        return self._env.step(action)  # type: ignore[no-any-return]

    def close(self) -> None:
        self._env.close()


def lean(obs: Any) -> np.ndarray:
    """A deterministic action from a CartPole observation: push toward the side the pole leans to."""
    return np.array([int(obs[2] > 0)], dtype=np.int64)


def play(env: BaseEnv, episodes: int, pause: float = 0.0) -> tuple[list[np.ndarray], list[float]]:
    """The observations of ``episodes`` episodes under :func:`lean` (one array per episode), and each reset's time."""
    seen, reset_seconds = [], []
    for _ in range(episodes):
        start = time.perf_counter()
        obs = env.reset()
        reset_seconds.append(time.perf_counter() - start)
        episode = [np.array(obs)]
        done = False
        while not done:
            timestep = env.step(lean(obs))
            obs, done = timestep.obs, timestep.done
            episode.append(np.array(obs))
        seen.append(np.stack(episode))
        time.sleep(pause)
    return seen, reset_seconds


def spare_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name.startswith("spare_envs")]


def test_resets_after_the_first_return_without_the_delay() -> None:
    env = SpareEnvs({"spare_envs": 2}, env_fn=SlowResetCartPole)
    env.seed(0)
    _, reset_seconds = play(env, 5, pause=RESET_SLEEP * 1.5)  # the spares have time to finish their resets
    env.close()
    assert reset_seconds[0] >= RESET_SLEEP
    assert max(reset_seconds[1:]) < RESET_SLEEP / 2, reset_seconds


def test_without_time_to_reset_a_swap_waits_for_the_spare() -> None:
    env = SpareEnvs({"spare_envs": 1}, env_fn=SlowResetCartPole)
    env.seed(0)
    env.reset()
    start = time.perf_counter()
    env.reset()  # the one spare started its reset just now
    waited = time.perf_counter() - start
    env.close()
    assert waited >= RESET_SLEEP * 0.8


@pytest.mark.parametrize("dynamic_seed", [True, False])
@pytest.mark.parametrize("spare_count", [0, 1, 3])
def test_episodes_replay_those_of_one_env_with_the_same_seed(spare_count: int, dynamic_seed: bool) -> None:
    plain = SlowResetCartPole({"reset_sleep": 0.0})
    plain.seed(7, dynamic_seed)
    expected, _ = play(plain, 6)
    plain.close()
    env = SpareEnvs({"spare_envs": spare_count}, env_fn=partial(SlowResetCartPole, {"reset_sleep": 0.001}))
    env.seed(7, dynamic_seed)
    got, _ = play(env, 6)
    env.close()
    assert len(got) == len(expected) == 6
    for got_episode, expected_episode in zip(got, expected, strict=True):
        np.testing.assert_array_equal(got_episode, expected_episode)
    starts = {tuple(episode[0]) for episode in expected}
    assert len(starts) == (6 if dynamic_seed else 1)  # dynamic seeds: every episode starts elsewhere


def test_seed_again_restarts_every_instance_and_replays() -> None:
    env = SpareEnvs({"spare_envs": 2}, env_fn=partial(SlowResetCartPole, {"reset_sleep": 0.001}))
    env.seed(3)
    first, _ = play(env, 4)
    env.seed(3)
    second, _ = play(env, 4)
    env.close()
    np.testing.assert_array_equal(np.concatenate(first), np.concatenate(second))


def test_observations_lie_in_the_declared_space() -> None:
    env = SpareEnvs({"spare_envs": 1}, env_fn=partial(SlowResetCartPole, {"reset_sleep": 0.001}))
    assert env.observation_space == CartPoleEnv.spaces_from_config({}).observation
    env.seed(1)
    seen, _ = play(env, 3)
    env.close()
    assert all(env.observation_space.contains(obs) for obs in np.concatenate(seen))


@pytest.mark.parametrize("manager_type", ["base", "subprocess", "thread"])
def test_through_managers_the_episodes_match_those_without_spares(manager_type: str) -> None:
    def run(fns: list[Callable[[], Any]]) -> dict[int, list[np.ndarray]]:
        manager = create_env_manager({"type": manager_type, "episode_num": 3}, fns)
        manager.seed(11)
        manager.launch()
        seen: dict[int, list[np.ndarray]] = {i: [np.array(obs)] for i, obs in manager.ready_obs.items()}
        while not manager.done:
            timesteps = manager.step({i: lean(obs) for i, obs in manager.ready_obs.items()})
            for i, timestep in timesteps.items():
                seen[i].append(np.array(timestep.obs))
        manager.close()
        return seen

    quick = partial(SlowResetCartPole, {"reset_sleep": 0.005})
    expected = run([quick, quick])
    got = run([with_spare_envs(quick, 1), with_spare_envs(quick, 2)])
    for i in (0, 1):
        np.testing.assert_array_equal(np.stack(got[i]), np.stack(expected[i]))


def test_a_manager_knows_the_spaces_without_building_an_env() -> None:
    fn = with_spare_envs(partial(CartPoleEnv, cfg={}), 2)
    assert fn.env_spaces == CartPoleEnv.spaces_from_config({})
    assert with_spare_envs(lambda: CartPoleEnv({}), 1).env_spaces is None


def test_close_joins_the_background_resets_and_closes_every_instance() -> None:
    env = SpareEnvs({"spare_envs": 3}, env_fn=SlowResetCartPole)
    env.seed(0)
    env.reset()
    assert spare_threads()
    instances = env.instances
    assert len(instances) == 4 and env.active_env in instances
    env.close()
    env.close()  # harmless
    assert not spare_threads()
    assert all(instance.resets == 1 for instance in instances)  # every started reset ran to its end
    with pytest.raises(RuntimeError, match="reset after close"):
        env.reset()


def test_a_background_reset_error_is_raised_by_the_reset_that_needs_that_instance() -> None:
    env = SpareEnvs({"spare_envs": 1}, env_fn=partial(SlowResetCartPole, {"reset_sleep": 0.001, "fail_at_reset": 2}))
    env.seed(0)
    env.reset()  # instance 0 active (its reset 1); instance 1's reset 1 in the background
    env.reset()  # instance 1 active; instance 0's reset 2 fails in the background
    time.sleep(0.05)
    with pytest.raises(InjectedResetFault, match="injected failure at reset 2") as info:
        env.reset()  # needs instance 0
    assert any("background reset of spare_envs instance 0" in note for note in info.value.__notes__)
    with pytest.raises(InjectedResetFault, match="at reset 2") as info:
        env.reset()  # every instance is reset anew: instance 1, active, fails its own 2nd reset in this thread
    assert not getattr(info.value, "__notes__", [])
    obs = env.reset()  # instance 1's reset 3 here, instance 0's reset 3 in the background
    assert env.observation_space.contains(obs)
    env.step(lean(obs))
    env.close()
    assert not spare_threads()


def test_close_warns_about_a_background_error_no_reset_reached() -> None:
    env = SpareEnvs({"spare_envs": 1}, env_fn=partial(SlowResetCartPole, {"reset_sleep": 0.001, "fail_at_reset": 1}))
    with pytest.raises(InjectedResetFault, match="at reset 1"):
        env.reset()  # the active instance's own reset fails in the calling thread
    env.reset()  # instance 0 (reset 2) active; instance 1's first reset fails in the background
    with pytest.warns(RuntimeWarning, match="background reset of instance 1 raised InjectedResetFault"):
        env.close()


def test_the_registered_type_wraps_a_registered_env_config() -> None:
    cfg = {
        "type": "spare_envs",
        "spare_envs": 2,
        "env": {"type": "cartpole", "import_names": ["dizoo.classic_control.cartpole.envs"]},
    }
    cls = env_class(cfg)
    assert cls is SpareEnvs and ENV_REGISTRY.get("spare_envs") is SpareEnvs
    assert cls.spaces_from_config(cfg) == CartPoleEnv.spaces_from_config({})
    env = cls(cfg)
    assert env.instance_count == 3 and isinstance(env.active_env, CartPoleEnv)
    env.seed(0)
    seen, _ = play(env, 2)
    env.close()
    assert all(env.observation_space.contains(obs) for obs in np.concatenate(seen))


def test_bad_arguments_raise() -> None:
    with pytest.raises(ConfigError, match=r"env\.spare_envs must be an int >= 0 \(instances reset ahead\), got -1"):
        SpareEnvs({"spare_envs": -1}, env_fn=SlowResetCartPole)
    with pytest.raises(ConfigError, match="no env to wrap"):
        SpareEnvs({"spare_envs": 1})
    with pytest.raises(ConfigError, match="not both"):
        SpareEnvs({"env": {"type": "cartpole"}}, env_fn=SlowResetCartPole)
    with pytest.raises(ConfigError, match=r"spare_envs must be an int >= 0; got 1\.5"):
        with_spare_envs(SlowResetCartPole, 1.5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="env_fn must be callable"):
        with_spare_envs("cartpole", 1)  # type: ignore[arg-type]
