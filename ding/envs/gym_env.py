"""``DingEnvWrapper``: any gymnasium (or old-gym-API) env as a ding ``BaseEnv``."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym

from ding.envs.base_env import BaseEnv
from ding.envs.conversion import action_converter, observation_converter, reward_converter
from ding.envs.env_wrappers import PRESETS, WrapperChain, apply_wrappers, resolve_wrappers
from ding.envs.gym_compat import OldGymAPIAdapter, is_old_api_env
from ding.envs.registry import ENV_REGISTRY
from ding.envs.replay import EpisodeVideoRecorder
from ding.envs.spaces import EnvSpaces, reward_space_of
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvSpecError

CALLERS = ("collector", "evaluator")


def as_gymnasium(env: Any) -> gym.Env[Any, Any]:
    """Return ``env`` itself if it is a gymnasium env, or an adapter if it speaks the old gym API."""
    if isinstance(env, gym.Env):
        return env
    if is_old_api_env(env):
        return OldGymAPIAdapter(env)
    raise TypeError(f"expected a gymnasium env or an old-gym-API env (step/reset), got {type(env).__name__}")


@functools.lru_cache(maxsize=64)
def _probe_registered_spaces(env_id: str, kwargs_items: tuple[tuple[str, Any], ...]) -> EnvSpaces:
    env = gym.make(env_id, **dict(kwargs_items))
    try:
        return EnvSpaces(env.observation_space, env.action_space, reward_space_of(env))
    finally:
        env.close()


@ENV_REGISTRY.register("ding_env_wrapper")
class DingEnvWrapper(BaseEnv):
    """Run a gymnasium env, given as an instance or by ``cfg.env_id``, behind the ``BaseEnv`` API.

    ``cfg.env_wrapper`` names a preset (``default``, ``atari_default``, ``mujoco_default``) or lists
    ``{type, kwargs}`` wrapper steps; ``eval_episode_return`` is appended when the chain lacks it,
    so ``info['eval_episode_return']`` is always there at an episode's end.

    Example:
        >>> env = DingEnvWrapper(cfg={'env_id': 'CartPole-v1'})
        >>> env.observation_space.shape, env.action_space, env.reward_space.shape
        ((4,), Discrete(2), (1,))
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> ts = env.step(0)
        >>> ts.obs.dtype, ts.reward.shape, ts.done
        (dtype('float32'), (1,), False)
        >>> env.close()
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": None,
        "env_kwargs": {},
        "env_wrapper": "default",
    }

    def __init__(
        self,
        env: Any = None,
        cfg: Mapping[str, Any] | None = None,
        seed_api: bool = True,
        caller: str = "collector",
    ) -> None:
        if caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}, got {caller!r}")
        cfg = dict(cfg or {})
        if caller == "evaluator":
            cfg.setdefault("is_train", False)
        builds_own_env = type(self)._make_raw_env is not DingEnvWrapper._make_raw_env
        if env is None and not builds_own_env and not cfg.get("env_id", type(self).default_config().env_id):
            raise ConfigError("DingEnvWrapper needs either an env instance or cfg.env_id")
        self._given_env = as_gymnasium(env) if env is not None else None
        self._seed_api = seed_api
        self._game_goes_on = False  # an episode ended with a lost life (episodic_life): the next reset continues
        self._raw: gym.Env[Any, Any] | None = None
        super().__init__(cfg)
        self._env = self._build()
        self._check_declared_spaces()
        self._to_obs = observation_converter(self._env.observation_space)
        self._to_reward = reward_converter(self.reward_space)
        self._to_action = action_converter(self._env.action_space, owner=type(self).__name__)
        self._recorder: EpisodeVideoRecorder | None = None
        self._rebuild_for_render = False
        self._closed = False
        if self._replay_path:
            self.enable_save_replay(self._replay_path)

    # ----- spaces --------------------------------------------------------------------------------
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """Spaces of ``cfg.env_id``: read from the gymnasium registration (made once, never reset, cached)."""
        env_id = cfg.get("env_id")
        if not env_id:
            raise EnvSpecError("DingEnvWrapper spaces need cfg.env_id (or an env instance)")
        try:
            return _probe_registered_spaces(str(env_id), tuple(sorted(dict(cfg.get("env_kwargs") or {}).items())))
        except gym.error.Error as err:
            raise EnvSpecError(f"cannot make env_id {env_id!r}: {err}") from err

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        chain = cfg.get("env_wrapper", "default")
        if chain is None:
            return ["eval_episode_return"]
        if isinstance(chain, str) and chain not in PRESETS:
            raise ConfigError(f"env_wrapper {chain!r} is not a preset; presets: {', '.join(PRESETS)}, or give a list")
        steps = resolve_wrappers(chain, train=bool(cfg.get("is_train", True)))
        items: list[Any] = [{"type": step.name, "kwargs": dict(step.kwargs)} for step in steps]
        if not any(step.name == "eval_episode_return" for step in steps):
            items.append("eval_episode_return")
        return items

    def _compute_spaces(self) -> EnvSpaces | None:
        if self._given_env is not None:
            given = self._given_env
            raw = EnvSpaces(given.observation_space, given.action_space, reward_space_of(given))
            return type(self).trace_from(raw, self._cfg)[-1][1]
        return super()._compute_spaces()

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        """The simulator, before any wrapper; subclasses override this for their own envs."""
        if self._given_env is not None:
            return self._given_env
        kwargs = dict(self._cfg.env_kwargs or {})
        if render:
            kwargs["render_mode"] = "rgb_array"
        return gym.make(self._cfg.env_id, **kwargs)

    def _build(self, render: bool = False) -> gym.Env[Any, Any]:
        self._raw = self._make_raw_env(render=render)
        return apply_wrappers(self._raw, type(self).wrapper_chain(self._cfg), train=bool(self._cfg.is_train))

    def _check_declared_spaces(self) -> None:
        raw = self._raw
        assert raw is not None  # set by _build
        wrapped = type(self).trace_from(
            EnvSpaces(raw.observation_space, raw.action_space, reward_space_of(raw)), self._cfg
        )[-1][1]
        if wrapped != self._spaces:
            raise EnvSpecError(
                f"{type(self).__name__}: the env built for this config has spaces {wrapped}, "
                f"but its declaration says {self._spaces}"
            )

    # ----- env interface -------------------------------------------------------------------------
    def reset(self) -> Any:
        if self._closed:
            raise RuntimeError(f"{type(self).__name__} is closed")
        if self._rebuild_for_render:
            self._rebuild_for_render = False
            self._game_goes_on = False  # a new simulator starts a new game
            self._env.close()
            self._env = self._build(render=True)
        # A seed restarts the game, so an episode that ended with a lost life, not the game, continues unseeded.
        seed = self._next_episode_seed() if self._seed_api and not self._game_goes_on else None
        self._game_goes_on = False
        obs, _ = self._env.reset(seed=seed)
        if self._recorder is not None:
            self._recorder.finish_episode()
            self._recorder.add_frame(self._env.render())
        return self._to_obs(obs)

    def step(self, action: Any) -> BaseEnvTimestep:
        obs, reward, terminated, truncated, info = self._env.step(self._to_action(action))
        if self._recorder is not None and self._env.render_mode == "rgb_array":
            self._recorder.add_frame(self._env.render())
            if terminated or truncated:
                self._recorder.finish_episode()
        done = bool(terminated or truncated)
        self._game_goes_on = done and info.get("real_done") is False
        return BaseEnvTimestep(
            self._to_obs(obs),
            self._to_reward(reward),
            done,
            info,
            terminated=bool(terminated),
            truncated=bool(truncated),
        )

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        super().seed(seed, dynamic_seed)
        self._game_goes_on = False

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._env.close()

    def render(self) -> Any:
        return self._env.render()

    def enable_save_replay(self, replay_path: str) -> None:
        """Record each following episode to ``replay_path/replay-episode-NNNN.mp4``.

        Envs made from ``env_id`` are rebuilt with ``render_mode='rgb_array'``; a given env
        instance must already have been made with that render mode.
        """
        super().enable_save_replay(replay_path)
        if self._env.render_mode != "rgb_array":
            if self._given_env is not None:
                raise ValueError(
                    f"enable_save_replay needs render_mode='rgb_array'; the given env has {self._env.render_mode!r}"
                )
            self._rebuild_for_render = True  # at the next reset, so a running episode is not cut
        self._recorder = EpisodeVideoRecorder(replay_path)

    @property
    def env(self) -> gym.Env[Any, Any]:
        """The wrapped gymnasium env."""
        return self._env
