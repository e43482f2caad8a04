"""From an env config section to the class that builds it: :func:`env_class`, and ``ChainedEnv`` for a config's chain.

:func:`env_class` imports the config's ``import_names`` (and ding's built-in env modules), looks ``env.type`` up in
:data:`~ding.envs.env_registry.ENV_REGISTRY` and returns the class that builds the env the config describes, wrapper
chain (``env.env_wrapper``) included. ``DingEnvWrapper`` and the dizoo envs apply ``env_wrapper`` themselves (they
declare the key in their ``config``). Any other ``BaseEnv`` — a user's own, written DI-engine's way or declaring
``raw_spaces`` — gets the chain through :func:`with_config_chain`: the class a config then builds is
``ChainedEnv.around(MyEnv)``, a ``DingEnvWrapper`` whose simulator is one ``MyEnv`` built from the same config, shown
to gymnasium's wrapper API by :class:`BaseEnvAsGymnasium`. So the chain runs as on any gymnasium env: rewards of shape
``(1,)``, ``info``, ``terminated`` / ``truncated`` and ``info['eval_episode_return']`` (appended to a chain that lacks
it) are ``DingEnvWrapper``'s. The env's own ``seed(seed, dynamic_seed)`` is called with the env's seeds; the episode
seed each reset draws seeds the wrappers' random streams. ``render`` and ``enable_save_replay`` work where the env
has them, and ``get_state`` / ``set_state`` where it has those.

Spaces: a class that declares ``raw_spaces`` keeps them known from the config alone (the chain's rules trace them,
managers read them from the constructor); for one that does not, one instance is probed in a child process and the
chain is traced from its spaces (:func:`ding.envs.probe.spec_trace_of`). ``ding -m spec`` shows each step.

Refused, with the reason, when the config is compiled: a class whose own ``wrapper_chain`` does not read
``env_wrapper``, an env that steps a batch natively (``batched``), and an env with more than one reward per step (a
reward per agent): the chain's wrappers take one reward.

Example:
    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> from ding.envs import BaseEnv, BaseEnvTimestep, EnvSpaces
    >>> class Walk(BaseEnv):
    ...     @classmethod
    ...     def raw_spaces(cls, cfg):
    ...         return EnvSpaces(spaces.Box(-10, 10, (1,), np.float32), spaces.Discrete(2))
    ...     def reset(self):
    ...         self._x = np.zeros(1, np.float32)
    ...         return self._x
    ...     def step(self, action):
    ...         self._x = self._x + (1 if int(action[0]) else -1)
    ...         return BaseEnvTimestep(self._x, np.ones(1, np.float32), False, {})
    ...     def close(self):
    ...         pass
    >>> chain = [('time_limit', {'max_episode_steps': 3}), ('frame_stack', {'n_frames': 2})]
    >>> cls = with_config_chain(Walk, {'env_wrapper': chain})
    >>> cls.__name__, cls.spaces_from_config({'env_wrapper': chain}).observation.shape
    ('ChainedEnv[Walk]', (2, 1))
    >>> env = cls(cfg={'env_wrapper': chain})
    >>> env.seed(0)
    >>> env.reset().tolist()
    [[0.0], [0.0]]
    >>> [env.step(np.array([1])).done for _ in range(3)]
    [False, False, True]
    >>> env.current_time_step().info['eval_episode_return']
    array([3.], dtype=float32)
    >>> env.close()
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.base_env import BaseEnv, as_action_array
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.probe import read_spaces
from ding.envs.values.spaces import EnvSpaces, reward_space_of
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import ConfigError, EnvSpecError

BUILTIN_ENV_MODULES = (
    "ding.envs.bridges.from_gymnasium",
    "ding.envs.builtin.multitask_env",
    "ding.envs.builtin.unittest_envs",
    "ding.envs.multi_agent.env",
    "ding.envs.builtin.spare_envs",
)
"""The modules that register ding's own env types; :func:`env_class` imports them (a config need not list them)."""

_AROUND: dict[type[BaseEnv], type[ChainedEnv]] = {}


def env_class(env_cfg: Mapping[str, Any]) -> type[BaseEnv]:
    """Import ``env_cfg.import_names`` and return the class that builds the env ``env_cfg`` describes.

    That is the class registered as ``env_cfg.type``; when the config names a wrapper chain (``env_wrapper``) that
    the class does not apply itself, the class that puts the chain around it (:func:`with_config_chain`).

    >>> env_class({'type': 'ding_env_wrapper'}).__name__
    'DingEnvWrapper'
    """
    ENV_REGISTRY.import_names(BUILTIN_ENV_MODULES)
    ENV_REGISTRY.import_names(env_cfg.get("import_names") or [])
    return with_config_chain(ENV_REGISTRY.get(env_cfg.get("type")), env_cfg)  # type: ignore[arg-type]


def role_env_fns(env_cfg: Mapping[str, Any], role: str) -> list[Callable[[], BaseEnv]]:
    """One constructor per env of a run's ``role`` (``"collector"`` or ``"evaluator"``): the class
    :func:`env_class` finds, with each config its ``create_<role>_env_cfg`` makes.

    >>> fns = role_env_fns({'type': 'ding_env_wrapper', 'env_id': 'CartPole-v1', 'collector_env_num': 3}, 'collector')
    >>> len(fns)
    3
    """
    if role not in ("collector", "evaluator"):
        raise ValueError(f"role must be 'collector' or 'evaluator', got {role!r}")
    cls = env_class(env_cfg)
    configs = cls.create_collector_env_cfg(env_cfg) if role == "collector" else cls.create_evaluator_env_cfg(env_cfg)
    return [functools.partial(cls, cfg=cfg) for cfg in configs]


def role_manager_config(env_cfg: Mapping[str, Any], role: str) -> dict[str, Any]:
    """The manager config of a run's ``role``: ``env.manager``, with DI-engine's ``env.<role>_batch_size`` as the
    envpool pool's batch (``options.batch_size``; below the role's env count the pool is asynchronous). The key is
    refused for a manager with no pool, and where it disagrees with ``options.batch_size``.

    >>> env = {'manager': {'type': 'envpool', 'env_id': 'CartPole-v1'}, 'collector_batch_size': 8}
    >>> role_manager_config(env, 'collector')['options'], role_manager_config(env, 'evaluator').get('options')
    ({'batch_size': 8}, None)
    """
    if role not in ("collector", "evaluator"):
        raise ValueError(f"role must be 'collector' or 'evaluator', got {role!r}")
    manager = dict(env_cfg.get("manager") or {})
    key = f"{role}_batch_size"
    batch = env_cfg.get(key)
    if batch is None:
        return manager
    kind = manager.get("type", "base")
    if kind not in ("envpool", "env_pool"):
        raise ConfigError(
            f"env.{key} is {batch!r}, but it sets the batch of an envpool pool and env_manager.type is {kind!r}: "
            "remove it, or use the envpool manager (other managers return partial batches with wait_num)"
        )
    envs = env_cfg.get(f"{role}_env_num")
    if isinstance(envs, int) and (batch > envs or envs % batch):
        raise ConfigError(
            f"env.{key} is {batch!r}, but the pool's batch must divide env.{role}_env_num ({envs}): the pool "
            f"returns that many of its envs each step"
        )
    options = dict(manager.get("options") or {})
    if options.get("batch_size", batch) != batch:
        raise ConfigError(
            f"env.{key} is {batch!r} and env.manager.options.batch_size is {options['batch_size']!r}: set one of them"
        )
    manager["options"] = {**options, "batch_size": batch}
    return manager


def with_config_chain(env_cls: type[BaseEnv], env_cfg: Mapping[str, Any]) -> type[BaseEnv]:
    """The class that builds ``env_cls`` with the chain ``env_cfg.env_wrapper`` applied.

    ``env_cls`` itself when the config names no chain or the class applies it itself; else
    ``ChainedEnv.around(env_cls)``. A class that cannot take a chain is refused with the reason
    (:class:`~ding.errors.ConfigError`).
    """
    chain = env_cfg.get("env_wrapper")
    if chain is None or env_cls.applies_env_wrapper():
        return env_cls
    refusal = why_no_chain(env_cls)
    if refusal is not None:
        raise ConfigError(f"env.env_wrapper {chain!r}: {refusal}")
    return ChainedEnv.around(env_cls)


def why_no_chain(env_cls: type[BaseEnv]) -> str | None:
    """Why a config's chain cannot be put around ``env_cls`` (None: it can); the reward check needs its spaces."""
    name = env_cls.__name__
    if env_cls.wrapper_chain.__func__ is not BaseEnv.wrapper_chain.__func__:  # type: ignore[attr-defined]
        return (
            f"{name} defines its own wrapper_chain, which does not read env_wrapper (its config does not declare the "
            f"key); add these wrappers to {name}.wrapper_chain, or declare 'env_wrapper' in {name}.config and apply it "
            "in wrapper_chain"
        )
    if env_cls.batched is True:
        return f"{name} steps a batch of sub-envs natively (batched=True); a wrapper chain wraps one env"
    return None


def one_reward(env_spaces: EnvSpaces, owner: str) -> EnvSpaces:
    """``env_spaces`` with a reward space of shape ``(1,)``; a reward space of more than one value is refused.

    >>> one_reward(EnvSpaces(spaces.Discrete(2), spaces.Discrete(2), spaces.Box(-1, 1, (), np.float32)), 'E').reward
    Box(-1.0, 1.0, (1,), float32)
    """
    reward = env_spaces.reward
    shape = tuple(reward.shape or ())
    if not isinstance(reward, spaces.Box) or int(np.prod(shape)) != 1:
        raise ConfigError(
            f"{owner}'s reward space is {reward}: a wrapper chain from env.env_wrapper needs one reward per step "
            "(a Box of shape () or (1,)), not a reward per agent; apply the wrappers inside the env, or run a "
            "PettingZoo env as 'parallel_env_wrapper', which takes env_wrapper"
        )
    if shape == (1,):
        return env_spaces
    low, high = reward.low.reshape(1), reward.high.reshape(1)
    return env_spaces.replace(reward=spaces.Box(low, high, (1,), reward.dtype))  # type: ignore[arg-type]


class ChainedEnv(DingEnvWrapper):
    """One env of ``inner_class``, built from the config, with the config's ``env_wrapper`` chain around it.

    Use :meth:`around` for the class of a given env class; the config's keys are that class's
    (merged as it merges them), and the env it builds gets the config as given.
    """

    inner_class: ClassVar[type[BaseEnv]]
    """The env class this class puts the chain around (set by :meth:`around`)."""

    @classmethod
    def around(cls, env_cls: type[BaseEnv]) -> type[ChainedEnv]:
        """The ``ChainedEnv`` class of ``env_cls`` (one per class and process), named ``ChainedEnv[<name>]``."""
        if env_cls not in _AROUND:
            name = f"{cls.__name__}[{env_cls.__name__}]"
            doc = f"{env_cls.__name__} with the wrapper chain of its config's env_wrapper (see ChainedEnv)."
            attributes = {"inner_class": env_cls, "__module__": cls.__module__, "__qualname__": name, "__doc__": doc}
            _AROUND[env_cls] = type(name, (cls,), attributes)
        return _AROUND[env_cls]

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        self._inner_cfg = cfg
        self._inner: BaseEnv | None = None
        super().__init__(None, cfg)

    # ----- the config and the spaces are the inner class's --------------------------------------
    @classmethod
    def default_config(cls) -> EasyDict:
        return cls.inner_class.default_config()

    @classmethod
    def declares_config(cls) -> bool:
        return cls.inner_class.declares_config()

    @classmethod
    def merge_config(cls, cfg: Mapping[str, Any] | None) -> EasyDict:
        return cls.inner_class.merge_config(cfg)

    @classmethod
    def declares_spaces(cls) -> bool:
        return cls.inner_class.declares_spaces()

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The inner class's declared spaces (:class:`~ding.errors.SpacesNotDeclaredError` when it declares none)."""
        return cls.inner_class.raw_spaces(cfg)

    @classmethod
    def trace_from(cls, raw: EnvSpaces, cfg: Mapping[str, Any]) -> list[tuple[str, EnvSpaces]]:
        """The chain's trace from the inner env's spaces (its reward as shape ``(1,)``; one reward per step)."""
        return super().trace_from(one_reward(raw, cls.inner_class.__name__), cfg)

    @classmethod
    def trace_from_probe(
        cls, cfg: Mapping[str, Any], probe: Callable[[type[BaseEnv], Mapping[str, Any]], EnvSpaces]
    ) -> list[tuple[str, EnvSpaces]]:
        """The chain traced from the probed spaces of the inner class, built with ``cfg`` as given."""
        return cls.trace_from(probe(cls.inner_class, cfg), cls.merge_config(cfg))

    # ----- building ------------------------------------------------------------------------------
    @property
    def inner(self) -> BaseEnv:
        """The env under the chain."""
        if self._inner is None:
            raise EnvSpecError(f"{type(self).__name__} has no env built")
        return self._inner

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        inner_cls = type(self).inner_class
        inner = inner_cls(cfg=self._inner_cfg if self._inner_cfg is not None else self._cfg)  # type: ignore[call-arg]
        if getattr(inner, "batched", False) is True:
            inner.close()
            raise EnvSpecError(f"{inner_cls.__name__} steps a batch of sub-envs natively; a wrapper chain wraps one")
        self._inner = inner
        return BaseEnvAsGymnasium(inner)

    def _check_declared_spaces(self) -> None:
        if self._spaces is not None:
            super()._check_declared_spaces()
            return
        raw = self._raw  # spaces not declared: the built env's, through the chain's rules, are the instance's
        assert raw is not None  # set by _build
        built = EnvSpaces(raw.observation_space, raw.action_space, reward_space_of(raw))
        self._spaces = type(self).trace_from(built, self._cfg)[-1][1]

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed this env (its episode seeds seed the wrappers) and the inner env, with its own ``seed``."""
        super().seed(seed, dynamic_seed)
        self.inner.seed(seed, dynamic_seed)

    def enable_save_replay(self, replay_path: str | None = None) -> None:
        """Record episodes: by the inner env's own ``enable_save_replay``, or else from the frames of its ``render``."""
        inner = self.inner
        if _overrides(inner, "enable_save_replay"):
            path = "./video" if replay_path is None else replay_path
            BaseEnv.enable_save_replay(self, path)
            inner.enable_save_replay(path)
        elif _overrides(inner, "render"):
            super().enable_save_replay(replay_path)
        else:
            raise ConfigError(
                f"{type(inner).__name__} cannot record replays: it implements neither enable_save_replay nor render"
            )


class BaseEnvAsGymnasium(gym.Env[Any, Any]):
    """A ding env as the simulator at the bottom of a gymnasium wrapper chain (:class:`ChainedEnv`'s).

    Its spaces are the env's (read after one ``reset`` when the env knows them only then), with the reward space of
    shape ``(1,)``. ``reset(seed=...)`` seeds this object's ``np_random``, which the wrappers above draw from; the
    env itself is seeded by its own ``seed``. Actions reach the env in DI-engine's form (a ``Discrete`` action as an
    int64 array of shape ``(1,)``, see :func:`~ding.envs.base_env.as_action_array`); rewards leave as floats, with
    the env's ``terminated`` / ``truncated`` and its ``info``.
    """

    def __init__(self, env: BaseEnv) -> None:
        self.env = env
        found = one_reward(read_spaces(env), type(env).__name__)
        self.observation_space, self.action_space, self.reward_space = found
        self.render_mode = "rgb_array" if _overrides(env, "render") else None
        self.metadata = {"render_modes": [self.render_mode] if self.render_mode else []}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        if options:
            raise ValueError(f"{type(self.env).__name__}.reset takes no options, got {options!r}")
        super().reset(seed=seed)
        return self.env.reset(), {}

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        timestep = self.env.step(as_action_array(action, self.action_space, top=True))
        if not isinstance(timestep, BaseEnvTimestep):  # a DI-engine tuple (obs, reward, done, info)
            timestep = BaseEnvTimestep(*timestep)
        reward = np.asarray(timestep.reward)
        if reward.size != 1:
            raise EnvSpecError(
                f"{type(self.env).__name__}.step returned a reward of shape {reward.shape}; its reward space "
                f"{self.reward_space} holds one value"
            )
        return timestep.obs, float(reward.reshape(())), bool(timestep.terminated), timestep.truncated, timestep.info

    def render(self) -> Any:
        return self.env.render()

    def close(self) -> None:
        self.env.close()

    def get_state(self) -> Any:
        """The env's own state (where it supports ``get_state``), for :mod:`ding.envs.env_state`."""
        return self.env.get_state()

    def set_state(self, state: Any) -> None:
        self.env.set_state(state)


def _overrides(env: BaseEnv, name: str) -> bool:
    """True when the env's class implements ``name`` itself rather than inheriting ``BaseEnv``'s."""
    return getattr(type(env), name, None) is not getattr(BaseEnv, name)


__all__ = [
    "BaseEnvAsGymnasium",
    "ChainedEnv",
    "one_reward",
    "role_env_fns",
    "role_manager_config",
    "why_no_chain",
    "with_config_chain",
]
