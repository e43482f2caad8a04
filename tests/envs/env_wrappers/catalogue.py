"""A catalogue of small, real gymnasium envs covering the input spaces wrappers must handle.

Each env samples observations from its own observation space with a generator seeded by
``reset(seed=...)``, so runs are deterministic; episodes terminate after ``episode_len``
steps so a 20-step run crosses an episode boundary.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from collections.abc import Callable
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from ding.envs.values.spaces import DEFAULT_REWARD_SPACE


class CatalogueEnv(gym.Env[Any, Any]):
    """A real env with the given spaces; rewards are drawn in [-2, 2] (scalar or vector)."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"]}

    def __init__(
        self,
        observation_space: spaces.Space[Any],
        action_space: spaces.Space[Any],
        reward_space: spaces.Space[Any] = DEFAULT_REWARD_SPACE,
        episode_len: int = 15,
        lives: int = 0,
    ) -> None:
        self.observation_space = observation_space
        self.action_space = action_space
        self.reward_space = reward_space
        self.episode_len = episode_len
        self.start_lives = lives
        self.lives = lives
        self.t = 0
        self.render_mode = "rgb_array"

    def _obs(self) -> Any:
        return self.observation_space.sample()

    def _reward(self) -> Any:
        if self.reward_space.shape == (1,):
            return float(self.np_random.uniform(-2.0, 2.0))
        return self.np_random.uniform(-2.0, 2.0, size=self.reward_space.shape).astype(np.float32)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self.observation_space.seed(seed)
        self.t = 0
        self.lives = self.start_lives
        return self._obs(), {"lives": self.lives}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(
            np.asarray(action, dtype=self.action_space.dtype) if isinstance(self.action_space, spaces.Box) else action
        ):
            raise ValueError(f"action {action!r} is outside {self.action_space}")
        self.t += 1
        if self.lives and self.t % 5 == 0:
            self.lives -= 1
        terminated = self.t >= self.episode_len or (self.start_lives > 0 and self.lives == 0)
        return self._obs(), self._reward(), terminated, False, {"lives": self.lives}

    def render(self) -> np.ndarray:
        return np.zeros((16, 16, 3), dtype=np.uint8)


def _img(shape: tuple[int, ...]) -> spaces.Box:
    return spaces.Box(0, 255, shape=shape, dtype=np.uint8)


@dataclasses.dataclass(frozen=True)
class CatalogueEntry:
    make: Callable[[], gym.Env[Any, Any]]
    description: str


CATALOGUE: dict[str, CatalogueEntry] = {
    "vector": CatalogueEntry(
        lambda: CatalogueEnv(spaces.Box(-10, 10, (5,), np.float32), spaces.Discrete(3)),
        "flat float32 vector, Discrete(3) actions",
    ),
    "vector_box_action": CatalogueEntry(
        lambda: CatalogueEnv(spaces.Box(-10, 10, (5,), np.float32), spaces.Box(-2.0, 3.0, (2,), np.float32)),
        "flat float32 vector, Box(2,) actions in [-2, 3]",
    ),
    "vector_float64": CatalogueEntry(
        lambda: CatalogueEnv(spaces.Box(-1, 1, (3,), np.float64), spaces.Box(-1.0, 1.0, (1,), np.float32)),
        "flat float64 vector (like Pendulum), Box(1,) actions",
    ),
    "image_hwc": CatalogueEntry(
        lambda: CatalogueEnv(_img((48, 64, 3)), spaces.Discrete(4)), "HWC uint8 RGB image, Discrete(4)"
    ),
    "image_chw": CatalogueEntry(
        lambda: CatalogueEnv(_img((3, 48, 64)), spaces.Discrete(4)), "CHW uint8 RGB image, Discrete(4)"
    ),
    "image_gray": CatalogueEntry(
        lambda: CatalogueEnv(_img((48, 64)), spaces.Discrete(4)), "HW uint8 grayscale image, Discrete(4)"
    ),
    "image_lives": CatalogueEntry(
        lambda: CatalogueEnv(_img((48, 64, 3)), spaces.Discrete(4), episode_len=40, lives=3),
        "HWC image with 3 lives lost every 5 steps (info['lives'])",
    ),
    "dict_obs": CatalogueEntry(
        lambda: CatalogueEnv(
            spaces.Dict(
                {
                    "image": _img((48, 64, 3)),
                    "state": spaces.Dict(
                        {"pos": spaces.Box(-5, 5, (3,), np.float32), "vel": spaces.Box(-1, 1, (2,), np.float32)}
                    ),
                }
            ),
            spaces.Box(-1.0, 1.0, (2,), np.float32),
        ),
        "Dict observation {image: HWC, state: {pos, vel}}, Box(2,) actions",
    ),
    "hybrid_action": CatalogueEntry(
        lambda: CatalogueEnv(
            spaces.Box(-1, 1, (10,), np.float32),
            spaces.Tuple((spaces.Discrete(3), spaces.Box(np.float32([0.0, -1.0]), np.float32([1.0, 1.0])))),
        ),
        "flat vector, hybrid Tuple(Discrete(3), Box(2,)) actions as in gym-hybrid",
    ),
    "vector_reward": CatalogueEntry(
        lambda: CatalogueEnv(
            spaces.Box(-10, 10, (4,), np.float32),
            spaces.Discrete(2),
            reward_space=spaces.Box(-2.0, 2.0, (3,), np.float32),
        ),
        "vector reward of 3 objectives, Discrete(2)",
    ),
}


def make_catalogue_env(name: str) -> gym.Env[Any, Any]:
    return CATALOGUE[name].make()


@dataclasses.dataclass(frozen=True)
class ShapeCase:
    """One shape-proof case: wrapper ``wrapper`` with ``kwargs`` on catalogue env ``env``."""

    wrapper: str
    env: str
    kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)

    def __str__(self) -> str:
        args = ",".join(f"{k}={v}" for k, v in self.kwargs.items())
        return f"{self.wrapper}[{self.env}]({args})"


def _make_ale(game: str) -> gym.Env[Any, Any]:
    import ale_py

    gym.register_envs(ale_py)
    return gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0)


ALE_CATALOGUE: dict[str, CatalogueEntry] = {
    "ale_pong": CatalogueEntry(lambda: _make_ale("Pong"), "real ALE Pong, no frame skip, HWC RGB, Discrete(6)"),
    "ale_breakout": CatalogueEntry(
        lambda: _make_ale("Breakout"), "real ALE Breakout (5 lives, FIRE to start), HWC RGB, Discrete(4)"
    ),
}
CATALOGUE.update(ALE_CATALOGUE)


def shape_cases() -> list[ShapeCase]:
    """Every shape-proof case, from the ``cases_*`` modules beside this one (the docs' wrapper catalogue shows them)."""
    package = importlib.import_module(__package__ or "tests.envs.env_wrappers")
    cases: list[ShapeCase] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("cases_"):
            cases.extend(importlib.import_module(f"{package.__name__}.{info.name}").CASES)
    return cases
