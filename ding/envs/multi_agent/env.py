"""``ParallelEnvWrapper``: any PettingZoo ``ParallelEnv`` behind the ``BaseEnv`` API, its spaces known from the config.

A config names the env by ``env_id``: a module whose ``parallel_env`` builds it (``'mpe2.simple_spread_v3'``), or
``'module:callable'`` for any other factory; ``env_kwargs`` are passed to it. The per-agent spaces are read from one
instance that is built but never reset or stepped (once per ``env_id`` and kwargs), and packed by
:class:`~ding.envs.multi_agent.layout.AgentLayout`; so managers and ``ding -m spec`` know the spaces before any
env runs. In Python an ``env_fn`` (a callable returning a ``ParallelEnv``) may be given instead of ``env_id``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
from easydict import EasyDict

from ding.envs.base_env import env_wrapper_key
from ding.envs.bridges.from_gymnasium import CALLERS, DingEnvWrapper
from ding.envs.bridges.from_old_gym import call_with_env_kwargs
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers import WrapperChain, resolve_wrappers
from ding.envs.multi_agent.gym_adapter import ParallelGymEnv, read_layout
from ding.envs.multi_agent.layout import AgentLayout
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvSpecError
from ding.utils.accepts import optional

LAYOUT_SWITCHES = ("agent_obs_only", "agent_specific_global_state", "shared_reward", "joint_action")
"""Config keys that choose how the agents' values are packed (:class:`AgentLayout`'s switches)."""

_LAYOUTS: dict[tuple[str, str], AgentLayout] = {}


def parallel_env_factory(env_id: Any) -> Callable[..., Any]:
    """The factory ``env_id`` names: ``'package.module'`` (its ``parallel_env``) or ``'package.module:callable'``.

    >>> parallel_env_factory('mpe2.simple_spread_v3').__name__
    'par_fn'
    >>> parallel_env_factory('mpe2.no_such_env')
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: env_id 'mpe2.no_such_env': cannot import module 'mpe2.no_such_env' \
(No module named 'mpe2.no_such_env'); give 'package.module' (with a parallel_env) or 'package.module:callable'
    """
    if not isinstance(env_id, str) or not env_id:
        raise ConfigError(
            f"env_id must name a ParallelEnv factory ('package.module' or 'module:callable'), got {env_id!r}"
        )
    module_name, _, attribute = env_id.partition(":")
    hint = "give 'package.module' (with a parallel_env) or 'package.module:callable'"
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"env_id {env_id!r}: cannot import module {module_name!r} ({err}); {hint}") from err
    factory = getattr(module, attribute or "parallel_env", None)
    if not callable(factory):
        raise ConfigError(
            f"env_id {env_id!r}: module {module_name!r} has no callable {attribute or 'parallel_env'!r}; {hint}"
        )
    return factory  # type: ignore[no-any-return]


@ENV_REGISTRY.register("parallel_env_wrapper")
class ParallelEnvWrapper(DingEnvWrapper):
    """A PettingZoo ``ParallelEnv`` as one ding env (see the module; the layout in :mod:`ding.envs.multi_agent.layout`).

    ``agent_obs_only``, ``agent_specific_global_state``, ``shared_reward`` and ``joint_action`` choose the layout;
    ``env_wrapper`` lists ding wrappers applied to the packed env (none by default). ``info['eval_episode_return']``
    is the team's return, which the env reports itself, so ``eval_episode_return`` may not be in ``env_wrapper``.
    ``step`` takes the action in the action space's form, or (for stacked actions) a dict by agent name.

    Example:
        >>> env = ParallelEnvWrapper(cfg={'env_id': 'mpe2.simple_spread_v3', 'env_kwargs': {'max_cycles': 5}})
        >>> env.observation_space['agent_state'].shape, env.action_space, env.reward_space.shape
        ((3, 18), MultiDiscrete([5 5 5]), (3,))
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> ts = env.step({'agent_0': 1, 'agent_1': 0, 'agent_2': 4})
        >>> ts.reward.shape, ts.info['alive'].tolist()
        ((3,), [True, True, True])
        >>> env.close()
    """

    config: ClassVar[dict[str, Any]] = {
        "env_id": optional(str, note="a PettingZoo env module"),
        "env_kwargs": {},
        "env_wrapper": env_wrapper_key(None),
        "agent_obs_only": False,
        "agent_specific_global_state": False,
        "shared_reward": False,
        "joint_action": False,
    }

    def __init__(
        self,
        env_fn: Callable[..., Any] | None = None,
        cfg: Mapping[str, Any] | None = None,
        caller: str = "collector",
    ) -> None:
        if env_fn is not None and not callable(env_fn):
            raise TypeError(f"env_fn must be a callable returning a ParallelEnv, got {type(env_fn).__name__}")
        self._env_fn = env_fn
        self._first_env: Any = None
        super().__init__(None, cfg, caller=caller)

    # ----- how the config names the env ----------------------------------------------------------
    @classmethod
    def parallel_env_call(cls, cfg: Mapping[str, Any]) -> tuple[str, Callable[..., Any], dict[str, Any]]:
        """The name (``env_id``), factory and keyword arguments that build the ``ParallelEnv`` of ``cfg``."""
        kwargs = cfg.get("env_kwargs") or {}
        if not isinstance(kwargs, Mapping):
            raise ConfigError(f"env_kwargs must be a dict, got {type(kwargs).__name__} {kwargs!r}")
        return str(cfg.get("env_id")), parallel_env_factory(cfg.get("env_id")), dict(kwargs)

    @classmethod
    def layout_switches(cls, cfg: Mapping[str, Any]) -> dict[str, bool]:
        """The layout's switches from ``cfg`` (each must be a bool)."""
        switches = {}
        for key in LAYOUT_SWITCHES:
            value = cfg.get(key, False)
            if not isinstance(value, bool):
                raise ConfigError(f"{cls.__name__}: {key} must be True or False, got {value!r}")
            switches[key] = value
        return switches

    @classmethod
    def layout_of(cls, cfg: Mapping[str, Any]) -> AgentLayout:
        """The :class:`AgentLayout` of ``cfg`` (the env is built once per factory and kwargs, never reset)."""
        name, factory, kwargs = cls.parallel_env_call(cfg)
        key = (name, json.dumps(kwargs, sort_keys=True, default=repr))
        if key not in _LAYOUTS:
            env = call_with_env_kwargs(factory, name, kwargs)
            try:
                _LAYOUTS[key] = read_layout(env)
            finally:
                env.close()
        return _with_switches(_LAYOUTS[key], cls.layout_switches(cfg))

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The packed spaces of the ``ParallelEnv`` ``cfg`` names."""
        return cls.layout_of(cfg).env_spaces()

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        steps = resolve_wrappers(cfg.get("env_wrapper"), train=bool(cfg.get("is_train", True)))
        if any(step.name == "eval_episode_return" for step in steps):
            raise ConfigError(
                f"{cls.__name__} reports info['eval_episode_return'] itself (the team's return); "
                "leave eval_episode_return out of env_wrapper"
            )
        return [{"type": step.name, "kwargs": dict(step.kwargs)} for step in steps]

    @classmethod
    def config_of_call(cls, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The config of ``cls(*args, **kwargs)``; None when an ``env_fn`` is given (its spaces are the env's)."""
        try:
            bound = inspect.signature(cls.__init__).bind(None, *args, **kwargs).arguments
        except TypeError:
            return None
        caller = bound.get("caller", "collector")
        if bound.get("env_fn") is not None or caller not in CALLERS:
            return None
        out = dict(bound.get("cfg") or {})
        if caller == "evaluator":
            out.setdefault("is_train", False)
        return out

    # ----- building ------------------------------------------------------------------------------
    def _compute_spaces(self) -> EnvSpaces | None:
        if self._env_fn is None:
            return super()._compute_spaces()
        self._first_env = self._env_fn()
        layout = _with_switches(read_layout(self._first_env), type(self).layout_switches(self._cfg))
        return type(self).trace_from(layout.env_spaces(), self._cfg)[-1][1]

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        if self._env_fn is not None:
            env, self._first_env = self._first_env, None
            if env is None or render:
                if env is not None:
                    env.close()
                env = self._env_fn(render_mode="rgb_array") if render else self._env_fn()
        else:
            name, factory, kwargs = type(self).parallel_env_call(self._cfg)
            env = call_with_env_kwargs(factory, name, kwargs, **({"render_mode": "rgb_array"} if render else {}))
        layout = _with_switches(read_layout(env), type(self).layout_switches(self._cfg))
        return ParallelGymEnv(env, layout)

    @property
    def parallel(self) -> ParallelGymEnv:
        """The packed env (below the ``env_wrapper`` chain)."""
        raw = self._raw
        if not isinstance(raw, ParallelGymEnv):
            raise EnvSpecError(f"{type(self).__name__} has no packed env (got {type(raw).__name__})")
        return raw

    @property
    def agents(self) -> tuple[str, ...]:
        """Every agent, in the order of the agent axis."""
        return self.parallel.agents

    # ----- env interface -------------------------------------------------------------------------
    def step(self, action: Any) -> BaseEnvTimestep:
        parallel = self.parallel
        if isinstance(action, Mapping) and parallel.layout.stacked_actions:
            action = parallel.layout.stack_actions(action, parallel.alive)
        return super().step(action)

    def clone(self, caller: str = "collector") -> ParallelEnvWrapper:
        """A new env with this one's factory and config, for ``caller`` (as :meth:`DingEnvWrapper.clone`)."""
        if caller not in CALLERS:
            raise ValueError(f"caller must be one of {CALLERS}, got {caller!r}")
        cfg = EasyDict(dict(self._cfg))
        if caller != self._caller:
            cfg.is_train = caller == "collector"
        if type(self).__init__ is not ParallelEnvWrapper.__init__:
            return type(self)(cfg=cfg)
        return type(self)(self._env_fn, cfg, caller=caller)


def _with_switches(layout: AgentLayout, switches: Mapping[str, bool]) -> AgentLayout:
    return dataclasses.replace(layout, **switches)  # type: ignore[arg-type]
