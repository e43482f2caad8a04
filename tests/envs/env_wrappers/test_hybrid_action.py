"""gym_hybrid_dict_action on a real hybrid-action env, and the gym_hybrid_default preset."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.envs.classic_control import CartPoleEnv

from ding.envs import DingEnvWrapper
from ding.envs.env_wrappers import (
    GymHybridDictActionWrapper,
    apply_wrappers,
    get_default_wrappers,
    resolve_wrappers,
    update_shape,
    update_space,
)
from ding.envs.values.spaces import reward_space_of
from ding.errors import ShapeRuleError


class HybridMoveEnv(gym.Env[np.ndarray, tuple[Any, np.ndarray]]):
    """A car on a plane driving to a target, with gym-hybrid's action space.

    Action ``(type, args)``: type 0 accelerates by ``args[0]`` in [0, 1], type 1 turns by ``args[1]``
    in [-1, 1] radians, type 2 brakes. The observation is ``(x, y, cos, sin, speed, distance)``; the
    reward is the decrease of the distance to the target; an episode ends at the target or after
    ``max_steps`` steps (truncated). The env rejects actions outside its space and keeps the last one.
    """

    def __init__(self, max_steps: int = 25) -> None:
        self.observation_space = spaces.Box(-np.inf, np.inf, (6,), np.float32)
        self.action_space = spaces.Tuple(
            (spaces.Discrete(3), spaces.Box(np.float32([0.0, -1.0]), np.float32([1.0, 1.0]), dtype=np.float32))
        )
        self.max_steps = max_steps
        self.last_action: tuple[Any, np.ndarray] | None = None
        self._pos = np.zeros(2)
        self._heading = 0.0
        self._speed = 0.0
        self._t = 0

    def _distance(self) -> float:
        return float(np.linalg.norm(self._pos - np.array([1.0, 1.0])))

    def _obs(self) -> np.ndarray:
        values = [*self._pos, np.cos(self._heading), np.sin(self._heading), self._speed, self._distance()]
        return np.array(values, dtype=np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._pos = self.np_random.uniform(-1.0, 0.0, size=2)
        self._heading = float(self.np_random.uniform(-np.pi, np.pi))
        self._speed = 0.0
        self._t = 0
        return self._obs(), {}

    def step(self, action: tuple[Any, np.ndarray]) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is outside {self.action_space}")
        self.last_action = action
        kind, args = int(action[0]), action[1]
        if kind == 0:
            self._speed = min(self._speed + 0.1 * float(args[0]), 0.3)
        elif kind == 1:
            self._heading += float(args[1])
        else:
            self._speed = max(self._speed - 0.1, 0.0)
        before = self._distance()
        self._pos = self._pos + self._speed * np.array([np.cos(self._heading), np.sin(self._heading)])
        self._t += 1
        arrived = self._distance() < 0.1
        return self._obs(), before - self._distance(), arrived, self._t >= self.max_steps, {}


def test_shape_and_space_rules() -> None:
    expected = {"type": 3, "mask": (2,), "args": (2,)}
    assert update_shape((6,), (3, (2,)), (1,), ["gym_hybrid_dict_action"]) == ((6,), expected, (1,))
    assert GymHybridDictActionWrapper.new_shape((6,), (3, (2,)), (1,)) == ((6,), expected, (1,))
    env = HybridMoveEnv()
    predicted = update_space(env.observation_space, env.action_space, None, ["GymHybridDictActionWrapper"])
    wrapped = GymHybridDictActionWrapper(env)
    assert wrapped.action_space == predicted.action
    assert wrapped.action_space["type"] == spaces.Discrete(3)
    assert wrapped.action_space["mask"] == spaces.Box(0, 1, (2,), np.int64)
    assert wrapped.action_space["args"] == env.action_space[1]
    assert wrapped.observation_space == env.observation_space and reward_space_of(wrapped) == predicted.reward


def test_dict_action_reaches_the_env_as_type_and_args_with_the_mask_not_applied() -> None:
    env = HybridMoveEnv()
    wrapped = GymHybridDictActionWrapper(env)
    wrapped.reset(seed=0)
    wrapped.step({"type": 1, "mask": np.array([0, 1]), "args": np.array([0.7, -0.5])})
    assert env.last_action is not None
    kind, args = env.last_action
    assert kind == 1 and isinstance(kind, np.int64)
    assert args.dtype == np.float32 and args.tolist() == [pytest.approx(0.7), -0.5]
    # The mask travels with the policy's action; the env gets the arguments whole, as DI-engine passes them.
    wrapped.step({"type": 0, "mask": np.array([0, 0]), "args": [0.25, 0.75]})
    assert env.last_action[1].tolist() == [0.25, 0.75]
    # DI-engine's random actions give the type as an array of shape (1,) and the mask may be left out.
    wrapped.step({"type": np.array([2]), "args": np.array([[0.0, 0.0]])})
    assert int(env.last_action[0]) == 2 and env.last_action[1].shape == (2,)


def test_sampled_dict_actions_drive_a_whole_episode() -> None:
    wrapped = GymHybridDictActionWrapper(HybridMoveEnv(max_steps=12))
    wrapped.reset(seed=3)
    wrapped.action_space.seed(3)
    steps, terminated, truncated = 0, False, False
    while not (terminated or truncated):
        obs, reward, terminated, truncated, _ = wrapped.step(wrapped.action_space.sample())
        steps += 1
        assert obs.shape == (6,) and isinstance(reward, float)
    assert terminated or steps == 12


@pytest.mark.parametrize(
    ("action", "error", "match"),
    [
        ((1, np.zeros(2)), TypeError, r"takes a dict action with keys \['type', 'mask', 'args'\]"),
        ({"type": 1}, ValueError, r"keys 'type' and 'args' .*got keys \['type'\]"),
        ({"type": 1, "args": [0, 0], "speed": 1}, ValueError, r"got keys \['args', 'speed', 'type'\]"),
        ({"type": 0.5, "args": [0, 0]}, ValueError, r"'type' must be one integer; got 0.5"),
        ({"type": [0, 1], "args": [0, 0]}, ValueError, r"'type' must be one integer"),
        ({"type": 0, "args": [0.1, 0.2, 0.3]}, ValueError, r"'args' must have \(2,\) elements .*got shape \(3,\)"),
    ],
)
def test_bad_actions_are_named(action: Any, error: type[Exception], match: str) -> None:
    wrapped = GymHybridDictActionWrapper(HybridMoveEnv())
    wrapped.reset(seed=0)
    with pytest.raises(error, match=match):
        wrapped.step(action)


def test_non_hybrid_action_spaces_are_rejected() -> None:
    with pytest.raises(
        TypeError, match=r"needs a hybrid action space Tuple\(Discrete\(n\), Box\) .*; got Discrete\(2\)"
    ):
        GymHybridDictActionWrapper(CartPoleEnv())
    with pytest.raises(
        ShapeRuleError, match=r"step 0 gym_hybrid_dict_action\(\).*hybrid action .*got action shape 2 \(Discrete\)"
    ):
        update_shape((4,), 2, (1,), ["gym_hybrid_dict_action"])
    with pytest.raises(ShapeRuleError, match=r"got action shape \(3, \(2,\), \(1,\)\) \(Tuple\)"):
        update_shape((4,), (3, (2,), (1,)), (1,), ["gym_hybrid_dict_action"])


def test_gym_hybrid_default_preset() -> None:
    assert [s.name for s in resolve_wrappers("gym_hybrid_default")] == ["gym_hybrid_dict_action", "eval_episode_return"]
    assert [w.type for w in get_default_wrappers("gym_hybrid_default", caller="evaluator")] == [
        "gym_hybrid_dict_action",
        "eval_episode_return",
    ]
    wrapped = apply_wrappers(HybridMoveEnv(max_steps=5), "gym_hybrid_default")
    wrapped.reset(seed=0)
    wrapped.action_space.seed(0)
    for _ in range(5):
        *_, terminated, truncated, info = wrapped.step(wrapped.action_space.sample())
        if terminated or truncated:
            break
    assert "eval_episode_return" in info


def test_gym_hybrid_default_in_ding_env_wrapper() -> None:
    env = DingEnvWrapper(env=HybridMoveEnv(max_steps=8), cfg={"env_wrapper": "gym_hybrid_default"})
    assert isinstance(env.action_space, spaces.Dict) and set(env.action_space.spaces) == {"type", "mask", "args"}
    env.seed(0)
    obs = env.reset()
    assert obs.shape == env.observation_space.shape
    for _ in range(8):
        timestep = env.step(env.random_action())
        assert timestep.reward.shape == env.reward_space.shape
        if timestep.done:
            break
    assert timestep.done and "eval_episode_return" in timestep.info
    env.close()
