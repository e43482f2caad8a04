"""get_state / set_state on real envs of each simulator family, and on the envs of a manager.

The rule under test: a state restored and then stepped (and reset) with the same actions gives the same
observations, rewards and end flags as the steps that followed it the first time.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs import BaseEnv, BaseEnvTimestep, DingEnvWrapper
from ding.envs.env_manager import create_env_manager
from ding.envs.env_state import (
    EnvStateError,
    EnvStateToken,
    StateNotSupportedError,
    restore_envs,
    snapshot_envs,
)
from ding.envs.env_wrappers import TransformedSpace
from dizoo.atari.envs.atari_env import AtariEnv
from dizoo.classic_control.acrobot.envs.acrobot_env import AcrobotEnv
from dizoo.classic_control.cartpole.envs.cartpole_env import CartPoleEnv
from dizoo.classic_control.pendulum.envs.pendulum_env import PendulumEnv
from dizoo.dmc.envs.dmc_env import DMCEnv
from dizoo.mujoco.envs.mujoco_env import MujocoEnv

Record = list[tuple[Any, Any, bool]]


def play(env: BaseEnv, actions: list[Any]) -> Record:
    """Step through ``actions``, resetting after each episode end; (obs, reward, done) of every step and reset."""
    out: Record = []
    for action in actions:
        ts = env.step(action)
        out.append((ts.obs, ts.reward, ts.done))
        if ts.done:
            out.append((env.reset(), None, False))
    return out


def assert_same(first: Record, second: Record) -> None:
    assert len(first) == len(second)
    for (obs_a, rew_a, done_a), (obs_b, rew_b, done_b) in zip(first, second, strict=True):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(rew_a, rew_b)
        assert done_a == done_b


def check_replay(env: BaseEnv, warmup: int, steps: int) -> EnvStateToken:
    env.seed(7)
    env.reset()
    play(env, [env.random_action() for _ in range(warmup)])
    actions = [env.random_action() for _ in range(steps)]
    state = env.get_state()
    first = play(env, actions)
    env.set_state(state)
    assert_same(first, play(env, actions))
    env.set_state(pickle.loads(pickle.dumps(state)))  # the token crosses processes, and restores again
    assert_same(first, play(env, actions))
    env.close()
    return state


ENVS: dict[str, tuple[Callable[[], BaseEnv], int, int]] = {
    "cartpole": (partial(CartPoleEnv, {}), 5, 60),  # crosses episode ends (random actions end an episode in ~20)
    "pendulum": (partial(PendulumEnv, {}), 190, 30),  # crosses the time limit
    "acrobot": (partial(AcrobotEnv, {}), 3, 20),
    "mujoco_ant": (partial(MujocoEnv, {"env_id": "Ant-v5"}), 10, 40),  # contacts: body positions lag the state
    "mujoco_hopper": (partial(MujocoEnv, {"env_id": "Hopper-v5"}), 10, 60),
    "atari_sticky": (partial(AtariEnv, {"env_id": "ALE/Breakout-v5", "repeat_action_probability": 0.25}), 30, 60),
    "dmc_state": (partial(DMCEnv, {"domain_name": "cheetah", "task_name": "run"}), 5, 30),
    "dmc_pixels": (
        partial(DMCEnv, {"domain_name": "cartpole", "task_name": "swingup", "from_pixels": True, "frame_stack": 3}),
        5,
        10,
    ),
}


@pytest.mark.parametrize("name", sorted(ENVS))
def test_a_restored_state_replays_the_same_steps(name: str) -> None:
    make, warmup, steps = ENVS[name]
    check_replay(make(), warmup, steps)


def test_atari_replays_across_lost_lives_and_a_new_game() -> None:
    env = AtariEnv({"env_id": "ALE/Breakout-v5", "repeat_action_probability": 0.25, "max_episode_steps": 40})
    state = check_replay(env, 10, 130)  # episodic_life ends an episode at each lost life; the time limit ends games
    assert state.layers[0] == "FrameStackWrapper" and state.layers[-1] == "AtariEnv"


def test_the_transformers_history_is_part_of_the_state() -> None:
    velocity = TransformedSpace(
        lambda obs, h: obs - h.observations[max(len(h) - 1, 0)],
        lambda box: spaces.Box(-np.inf, np.inf, box.shape, box.dtype),
    )
    env = DingEnvWrapper(
        cfg={"env_id": "CartPole-v1", "env_wrapper": [("transformers", {"state_transformer": velocity})]}
    )
    check_replay(env, 4, 40)


def test_the_current_time_step_is_restored_with_the_state() -> None:
    env = CartPoleEnv({})
    env.seed(0)
    first = env.reset()
    state = env.get_state()
    env.step(0)
    env.set_state(state)
    np.testing.assert_array_equal(env.current_time_step().obs, first)
    assert env.current_step_type() == 0 and not env.should_reset()


def test_simulators_without_state_access_are_refused_naming_the_env() -> None:
    env = DingEnvWrapper(cfg={"env_id": "LunarLander-v3"})
    with pytest.raises(StateNotSupportedError, match=r"DingEnvWrapper: the state of its simulator .*LunarLander"):
        env.get_state()
    env.close()

    class Plain(BaseEnv):
        def reset(self) -> Any:
            return 0

        def step(self, action: Any) -> BaseEnvTimestep:
            return BaseEnvTimestep(0, 0.0, False, {})

        def close(self) -> None:
            pass

    with pytest.raises(NotImplementedError, match=r"Plain does not support get_state / set_state"):
        Plain().get_state()
    with pytest.raises(StateNotSupportedError, match=r"Plain does not support get_state / set_state"):
        Plain().set_state(None)


def test_a_state_of_another_env_is_refused_naming_both() -> None:
    cartpole, pendulum = CartPoleEnv({}), PendulumEnv({})
    cartpole.reset()
    with pytest.raises(EnvStateError, match=r"taken from CartPoleEnv \(EvalEpisodeReturnWrapper > .*this env is Pend"):
        pendulum.set_state(cartpole.get_state())
    with pytest.raises(EnvStateError, match=r"CartPoleEnv.set_state takes a state from get_state\(\), got dict"):
        cartpole.set_state({"state": [0, 0, 0, 0]})


def _cartpole_fn() -> BaseEnv:
    return CartPoleEnv({})


@pytest.mark.parametrize("kind", [{"type": "base"}, {"type": "subprocess", "envs_per_worker": 1}])
def test_a_manager_snapshots_and_restores_every_env(kind: dict[str, Any]) -> None:
    with create_env_manager(kind, [_cartpole_fn] * 3) as manager:
        manager.seed(0)
        manager.launch()
        rng = np.random.default_rng(0)
        for _ in range(5):
            manager.step({i: int(rng.integers(2)) for i in manager.ready_obs})
        states = snapshot_envs(manager)
        assert sorted(states) == [0, 1, 2] and all(isinstance(s, EnvStateToken) for s in states.values())
        plan = [{i: int(rng.integers(2)) for i in range(3)} for _ in range(8)]
        before = [manager.call_envs("step", (actions[i],), env_ids=[i])[i] for actions in plan for i in range(3)]
        current = restore_envs(manager, states)
        assert sorted(current) == [0, 1, 2] and all(isinstance(ts, BaseEnvTimestep) for ts in current.values())
        after = [manager.call_envs("step", (actions[i],), env_ids=[i])[i] for actions in plan for i in range(3)]
        for a, b in zip(before, after, strict=True):
            np.testing.assert_array_equal(a.obs, b.obs)
            assert a.done == b.done
        restore_envs(manager, {1: states[1]})  # one env alone
        np.testing.assert_array_equal(manager.call_envs("current_time_step", env_ids=[1])[1].obs, current[1].obs)


@pytest.mark.parametrize(
    "make",
    [
        partial(CartPoleEnv, {}),
        partial(MujocoEnv, {"env_id": "Hopper-v5"}),
        partial(AtariEnv, {"env_id": "ALE/Breakout-v5", "max_episode_steps": 30}),
    ],
    ids=["cartpole", "hopper", "atari"],
)
def test_a_state_restores_into_another_env_of_the_same_config(make: Callable[[], BaseEnv]) -> None:
    source, target = make(), make()  # the target is neither seeded nor reset: the state brings its seeds
    source.seed(1)
    source.reset()
    play(source, [source.random_action() for _ in range(3)])
    actions = [source.random_action() for _ in range(80)]  # through episode ends and seeded resets
    target.set_state(source.get_state())
    assert_same(play(source, actions), play(target, actions))
