"""The envs random wrapper chains run on: real ones (classic control, toy text, Box2D, ALE, MuJoCo, dm_control)
and the synthetic ones of :mod:`tests.envs.env_wrappers.synthetic`.

Raw envs are built once per test session and reused: each example wraps the cached env anew and resets it
with a seed, and wrappers never change the env they wrap.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from tests.envs.env_wrappers.synthetic import SYNTHETIC


@dataclasses.dataclass(frozen=True)
class ChainEnv:
    """How to build one env, and what its spaces cannot tell about it."""

    make: Callable[[], gym.Env[Any, Any]]
    steps: int = 40  # steps per example (fewer for envs that render)
    ale: bool = False  # the innermost env is an ALE env (RAM, action meanings, lives)
    lives: bool = False  # lives can be read (ALE, or info['lives'])
    needs: str | None = None  # module that must import, else the env is skipped


def _gym(env_id: str, **kwargs: Any) -> Callable[[], gym.Env[Any, Any]]:
    return functools.partial(gym.make, env_id, **kwargs)


def _ale(game: str, **kwargs: Any) -> gym.Env[Any, Any]:
    import ale_py

    gym.register_envs(ale_py)
    return gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0, **kwargs)


def _cartpole_pixels() -> gym.Env[Any, Any]:
    from gymnasium.wrappers import AddRenderObservation

    return AddRenderObservation(gym.make("CartPole-v1", render_mode="rgb_array"), render_only=True)


def _dmc(domain: str, task: str, **kwargs: Any) -> gym.Env[Any, Any]:
    from dizoo.dmc.envs import DMCAdapter

    return DMCAdapter(domain, task, **kwargs)


CHAIN_ENVS: dict[str, ChainEnv] = {
    "CartPole-v1": ChainEnv(_gym("CartPole-v1")),
    "Pendulum-v1": ChainEnv(_gym("Pendulum-v1")),
    "MountainCarContinuous-v0": ChainEnv(_gym("MountainCarContinuous-v0")),
    "Acrobot-v1": ChainEnv(_gym("Acrobot-v1")),
    "Blackjack-v1": ChainEnv(_gym("Blackjack-v1")),
    "FrozenLake-v1": ChainEnv(_gym("FrozenLake-v1")),
    "cartpole_pixels": ChainEnv(_cartpole_pixels, steps=8),
    "LunarLander-v3": ChainEnv(_gym("LunarLander-v3"), needs="Box2D"),
    "LunarLanderContinuous": ChainEnv(_gym("LunarLander-v3", continuous=True), needs="Box2D"),
    "BipedalWalker-v3": ChainEnv(_gym("BipedalWalker-v3"), needs="Box2D"),
    "CarRacing-v3": ChainEnv(_gym("CarRacing-v3"), steps=6, needs="Box2D"),
    "ale_pong_rgb": ChainEnv(functools.partial(_ale, "Pong"), ale=True, lives=True, needs="ale_py"),
    "ale_breakout_gray": ChainEnv(
        functools.partial(_ale, "Breakout", obs_type="grayscale"), ale=True, lives=True, needs="ale_py"
    ),
    "ale_breakout_ram": ChainEnv(
        functools.partial(_ale, "Breakout", obs_type="ram"), ale=True, lives=True, needs="ale_py"
    ),
    "Hopper-v5": ChainEnv(_gym("Hopper-v5"), needs="mujoco"),
    "HalfCheetah-v5": ChainEnv(_gym("HalfCheetah-v5"), needs="mujoco"),
    "dmc_cartpole_states": ChainEnv(functools.partial(_dmc, "cartpole", "swingup"), needs="dm_control"),
    "dmc_cheetah_pixels": ChainEnv(
        functools.partial(_dmc, "cheetah", "run", from_pixels=True, height=24, width=32), steps=4, needs="dm_control"
    ),
    **{name: ChainEnv(make, steps=30, lives=True) for name, make in SYNTHETIC.items()},
}

#: The envs whose simulators are installed here.
AVAILABLE = sorted(name for name, e in CHAIN_ENVS.items() if e.needs is None or importlib.util.find_spec(e.needs))

_BUILT: dict[str, gym.Env[Any, Any]] = {}


def raw_env(name: str) -> gym.Env[Any, Any]:
    """The session's one instance of env ``name``."""
    if name not in _BUILT:
        _BUILT[name] = CHAIN_ENVS[name].make()
    return _BUILT[name]
