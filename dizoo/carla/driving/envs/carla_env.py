"""The ``carla`` env: drive a vehicle along a route in a CARLA 0.9.x server.

:class:`CarlaDrivingEnv` is the gymnasium env; it connects to a server at its first ``reset`` (so it can be
built, its spaces read and its wrapper chain checked without one). Everything between the server and the
agent is a pure function: :func:`~dizoo.carla.driving.envs.sensors.observation_from_sensors`,
:func:`~dizoo.carla.driving.envs.rules.reward_from_state`,
:func:`~dizoo.carla.driving.envs.rules.termination_from_state` (combined per step by :func:`step_outcome`) and
:func:`~dizoo.carla.driving.envs.control.vehicle_control_from_action`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from ding.envs import ENV_REGISTRY, DingEnvWrapper, EnvSpaces
from ding.envs.env_wrappers import WrapperChain
from ding.utils.accepts import optional, redeclare
from dizoo.carla.driving.envs.client import CarlaSession
from dizoo.carla.driving.envs.control import ACTION_SPACE, vehicle_control_from_action
from dizoo.carla.driving.envs.rules import (
    DrivingState,
    driving_state,
    next_stuck_steps,
    reward_from_state,
    termination_from_state,
)
from dizoo.carla.driving.envs.sensors import (
    SensorReadings,
    birdview_from_sensors,
    birdview_to_rgb,
    observation_from_sensors,
    observation_space,
)
from dizoo.carla.driving.envs.settings import CARLA_CONFIG, CarlaSettings, parse_settings


@dataclasses.dataclass(frozen=True)
class EpisodeProgress:
    """What one step's outcome depends on besides the new readings."""

    steps: int = 0
    stuck_steps: int = 0
    previous: DrivingState | None = None


@dataclasses.dataclass(frozen=True)
class StepOutcome:
    obs: dict[str, np.ndarray]
    reward: float
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    progress: EpisodeProgress


def step_outcome(progress: EpisodeProgress, readings: SensorReadings, settings: CarlaSettings) -> StepOutcome:
    """Observation, reward, episode end and info for the readings after one step."""
    state = driving_state(readings)
    steps = progress.steps + 1
    stuck = next_stuck_steps(progress.stuck_steps, state, settings)
    end = termination_from_state(state, steps, stuck, settings)
    info: dict[str, Any] = {"distance_to_goal": state.distance_to_goal, "route_deviation": state.route_deviation}
    if end.reason is not None:
        info["end_reason"] = end.reason
        info["success"] = end.reason == "goal"
    return StepOutcome(
        obs=observation_from_sensors(readings, settings),
        reward=reward_from_state(progress.previous, state, settings),
        terminated=end.terminated,
        truncated=end.truncated,
        info=info,
        progress=EpisodeProgress(steps, stuck, state),
    )


class CarlaDrivingEnv(gym.Env[Any, Any]):
    """A gymnasium env around a :class:`~dizoo.carla.driving.envs.client.CarlaSession`, connected at first reset."""

    def __init__(self, settings: CarlaSettings, render_mode: str | None = None) -> None:
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.settings = settings
        self.render_mode = render_mode
        self.observation_space = observation_space(settings)
        self.action_space = ACTION_SPACE
        self.metadata = {"render_modes": ["rgb_array"], "render_fps": round(1.0 / settings.fixed_delta_seconds)}
        self._session: CarlaSession | None = None
        self._progress = EpisodeProgress()
        self._readings: SensorReadings | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        if self._session is None:
            self._session = CarlaSession(self.settings)
        self._readings = self._session.start_episode(self.np_random)
        self._progress = EpisodeProgress(previous=driving_state(self._readings))
        info = {"server": "{}:{}".format(*self._session.endpoint)}
        return observation_from_sensors(self._readings, self.settings), info

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if self._session is None:
            raise RuntimeError("CarlaDrivingEnv.step called before reset")
        self._readings = self._session.apply(vehicle_control_from_action(action))
        outcome = step_outcome(self._progress, self._readings, self.settings)
        self._progress = outcome.progress
        return outcome.obs, outcome.reward, outcome.terminated, outcome.truncated, outcome.info

    def render(self) -> np.ndarray | None:  # type: ignore[override]
        """The camera frame, or the painted birdview without a camera."""
        if self.render_mode != "rgb_array" or self._readings is None:
            return None
        if self._readings.camera is not None:
            return self._readings.camera
        bv = self.settings.birdview
        return birdview_to_rgb(birdview_from_sensors(self._readings, bv.size, bv.pixels_per_meter))

    def close(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            session.close()


@ENV_REGISTRY.register("carla")
class CarlaEnv(DingEnvWrapper):
    """Drive along a planned route in CARLA: Dict observation (camera, birdview, speed, navigation), actions
    (steer, throttle, brake); see :data:`~dizoo.carla.driving.envs.settings.CARLA_CONFIG` for the keys.

    With ``act_scale`` (default) the agent acts in [-1, 1]^3 through ``normalized_action``. The env connects to
    the first reachable server of ``servers`` at its first ``reset``.

    Example:
        >>> spaces = CarlaEnv.spaces_from_config({'camera': {'enabled': False}, 'birdview': {'size': 32}})
        >>> {key: sub.shape for key, sub in spaces.observation.spaces.items()}, spaces.action
        ({'birdview': (4, 32, 32), 'navigation': (12,), 'speed': (1,)}, Box(-1.0, 1.0, (3,), float32))
    """

    config: ClassVar[dict[str, Any]] = redeclare(
        CARLA_CONFIG, {"town": optional(str, note="a map to load, e.g. 'Town01'; None keeps the server's map")}
    )

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        super().__init__(cfg=cfg or {})

    @classmethod
    def settings(cls, cfg: Mapping[str, Any]) -> CarlaSettings:
        """The checked settings of a config (unknown keys and bad values raise ``ConfigError``)."""
        extra = {key: value for key, value in cls.default_config().items() if key not in CARLA_CONFIG}
        return parse_settings(cfg, extra_keys=extra)

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        return EnvSpaces(observation_space(cls.settings(cfg)), ACTION_SPACE)

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = list(super().wrapper_chain(cfg) or [])  # type: ignore[arg-type]
        return [*chain, "normalized_action"] if cfg.get("act_scale", True) else chain

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        return CarlaDrivingEnv(type(self).settings(self._cfg), render_mode="rgb_array" if render else None)
