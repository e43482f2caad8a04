"""``BaseEnv``: the env interface env managers drive, with spaces declared before any reset."""

from __future__ import annotations

import copy
import dataclasses
import enum
import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import numpy as np
from easydict import EasyDict
from gymnasium import spaces

from ding.envs.env_wrappers import WrapperChain, trace_spaces
from ding.envs.values.seeding import EpisodeSeeds
from ding.envs.values.spaces import DEFAULT_REWARD_SPACE, EnvSpaces
from ding.envs.values.timestep import BaseEnvTimestep
from ding.errors import SpacesNotDeclaredError, SpacesNotKnownError, StateNotSupportedError
from ding.utils.accepts import (
    Accepts,
    anything,
    check_value,
    check_values,
    count,
    optional,
    plain_defaults,
    redeclare,
    satisfying,
)
from ding.utils.merge import deep_merge_dicts
from ding.utils.value_rules import conforms

MAX_ENV_NUM = 1024
"""The most envs of one role (collector or evaluator) a config may ask for: each may be a worker process, so a count
beyond it is refused before anything is built (16 times the 64 of DI-engine's largest configs)."""


def env_wrapper_key(preset: str | None) -> Accepts:
    """The ``env_wrapper`` key of an env's ``config``: a preset name, a list of wrapper items or None (the chain is
    checked as a whole by ``compile_config``)."""
    return anything(preset, note="a preset name, a list of wrapper items or None")


COMMON_ENV_CONFIG: dict[str, Any] = {
    "type": anything(None, note="the registered env name, resolved with create_config"),
    "import_names": [],
    "collector_env_num": count(8, high=MAX_ENV_NUM, note="envs collecting samples"),
    "evaluator_env_num": count(5, high=MAX_ENV_NUM, note="envs playing evaluation episodes"),
    "n_evaluator_episode": count(5),
    "collector_batch_size": optional(
        count(), note="the envpool manager's pool batch for the collector (DI-engine's key; None: every env)"
    ),
    "evaluator_batch_size": optional(
        count(), note="the envpool manager's pool batch for the evaluator (DI-engine's key; None: every env)"
    ),
    "stop_value": optional(
        satisfying("a number other than NaN", lambda v: conforms(float, v) and v == v),
        note="the mean evaluation return that ends training; None: none does",
    ),
    "is_train": True,
    "replay_path": optional(str, note="a directory path for episode videos"),
    "manager": {},
    "env_wrapper": env_wrapper_key(None),
}
"""Keys every env config accepts, with what they accept; each env class adds its own in its ``config``.

``env_wrapper`` is the wrapper chain the config puts on the env (None: none). An env class that applies it itself
declares the key in its own ``config`` (:meth:`BaseEnv.applies_env_wrapper`; ``DingEnvWrapper`` and the dizoo envs,
with their ``"default"`` preset); on any other env the chain is applied by :class:`~ding.envs.from_config.ChainedEnv`.
"""


class StepType(enum.IntEnum):
    """Where the current time step lies in its episode (TF-Agents' numbering)."""

    FIRST = 0
    MID = 1
    LAST = 2


@dataclasses.dataclass(frozen=True)
class _Started:
    """What ``reset`` returned: the first time step, built when asked for."""

    obs: Any


class BaseEnv(ABC):
    """An RL environment whose spaces are known from its config alone.

    Subclasses declare ``config`` (their default keys), ``raw_spaces(cfg)`` (the simulator's own
    spaces, stated without building it) and optionally ``wrapper_chain(cfg)``; the spaces an
    instance exposes are ``spaces_from_config(cfg)``, available before ``reset``. A config passed
    to the constructor is merged strictly into ``default_config()``: an unknown key raises
    :class:`~ding.errors.ConfigError` with the known keys and a close match.

    A subclass written DI-engine's way works too: its own ``__init__(self, cfg)`` that need not call
    ``super().__init__``, spaces as properties (or attributes such as ``self._observation_space``)
    set in ``__init__`` or first known after ``reset``, its own ``seed``. Every helper here
    (``random_action``, ``seed``, ``create_collector_env_cfg``, ``enable_save_replay``, ``repr``)
    works on such an instance. Without ``raw_spaces`` its spaces are *probed* by building one
    instance (see :mod:`ding.envs.probe`), so they are known only at that cost; adding
    ``raw_spaces`` (and ``config``, its default keys) makes them known from the config alone.
    Reading a space before such an env knows it raises :class:`~ding.errors.SpacesNotKnownError`
    (an ``AttributeError``); an env that never states a reward space has DI-engine's default,
    ``Box(-inf, inf, (1,), float32)``.

    Every env knows its current time step (TF-Agents' semantics): :meth:`current_time_step` is the last
    step's timestep, or after ``reset`` a first one (the observation, a zero reward, not done), and
    :meth:`should_reset` is True until the first ``reset`` and after a step that ends the episode. A
    subclass's ``reset`` and ``step`` are wrapped to record them, so a subclass only implements them.
    :meth:`get_state` / :meth:`set_state` take and restore the env's whole state where the env supports
    it (:class:`~ding.envs.DingEnvWrapper` does for classic control, MuJoCo, ALE and dm_control).

    ``batched`` (False) and ``batch_size`` (None) are for a simulator that steps a batch natively: such an
    env sets ``batched = True`` and ``batch_size`` to its number of sub-envs, takes actions with a leading
    axis of that size in ``step`` and returns observations, rewards and end flags with it; its spaces
    describe one sub-env.
    """

    config: ClassVar[dict[str, Any]] = {}
    batched: bool = False
    """True for an env that steps a batch of sub-envs natively (see above)."""
    batch_size: int | None = None
    """The number of sub-envs of a batched env; None for an env that is not batched."""
    _ding_time_step: Any = None  # what reset or step returned last (a reset's as _Started)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, recording in (("reset", _recording_reset), ("step", _recording_step)):
            method = cls.__dict__.get(name)
            if inspect.isfunction(method) and not getattr(method, "__isabstractmethod__", False):
                setattr(cls, name, recording(method))
        batched, size = cls.__dict__.get("batched", False), cls.__dict__.get("batch_size")
        if not isinstance(batched, (bool, property)):
            raise TypeError(f"{cls.__name__}.batched must be a bool, got {batched!r}")
        ok_size = size is None or isinstance(size, property) or (type(size) is int and size >= 1)
        if not ok_size:
            raise TypeError(f"{cls.__name__}.batch_size must be a positive int or None, got {size!r}")

    def __init__(self, cfg: Mapping[str, Any] | None = None) -> None:
        self._cfg = type(self).merge_config(cfg)
        self._spaces: EnvSpaces | None = self._compute_spaces()
        self._seed: int | None = None
        self._dynamic_seed = True
        self._episode_seeds: EpisodeSeeds | None = None
        self._replay_path: str | None = self._cfg.get("replay_path")

    # ----- declared configuration and spaces -----------------------------------------------------
    @classmethod
    def declared_config(cls) -> dict[str, Any]:
        """The env's declared config: the common keys with each class's own ``config`` (its defaults, and what its
        keys accept: :mod:`ding.utils.accepts`)."""
        declared: dict[str, Any] = dict(COMMON_ENV_CONFIG)
        for klass in reversed(cls.__mro__):
            declared = redeclare(declared, klass.__dict__.get("config", {}))
        return declared

    @classmethod
    def default_config(cls) -> EasyDict:
        """The env's full default config: plain values of :meth:`declared_config`."""
        return EasyDict(plain_defaults(cls.declared_config()))

    @classmethod
    def declares_config(cls) -> bool:
        """True when the class (or a base below ``BaseEnv``) states its keys in a ``config`` class attribute.

        Only then can unknown keys be told apart: a DI-engine-style env without ``config`` takes any key.
        """
        return any("config" in klass.__dict__ for klass in cls.__mro__[: cls.__mro__.index(BaseEnv)])

    @classmethod
    def merge_config(cls, cfg: Mapping[str, Any] | None) -> EasyDict:
        """``cfg`` merged into :meth:`default_config` and held to what each declared key accepts; strictly (unknown
        keys raise) if the class declares a config."""
        merged = deep_merge_dicts(cls.default_config(), cfg or {}, strict=cls.declares_config(), path="env")
        cls.check_config(merged)
        return EasyDict(merged)

    @classmethod
    def check_config(cls, cfg: Mapping[str, Any]) -> None:
        """Refuse a value of ``cfg`` (a merged env config) that its key does not accept, naming the key path.

        The ``manager`` section is the env manager's to check.
        """
        declared = cls.declared_config()
        check_values({key: value for key, value in declared.items() if key != "manager"}, cfg, "env")

    @classmethod
    def config_of_call(cls, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The config ``cls(*args, **kwargs)`` is built with, when the arguments tell it; else None.

        By default the one argument is the config (``cls(cfg)`` or ``cls(cfg=cfg)``); subclasses whose
        constructors take more override this, so a manager knows the spaces of ``partial(cls, ...)``.
        """
        if not args and set(kwargs) <= {"cfg"}:
            return kwargs.get("cfg") or {}
        if len(args) == 1 and not kwargs:
            return args[0] or {}
        return None

    @classmethod
    def applies_env_wrapper(cls) -> bool:
        """True when the class applies ``cfg.env_wrapper`` itself: its own ``config`` (or a base's, below ``BaseEnv``)
        declares the key, and its ``wrapper_chain`` reads it. Otherwise a chain in the config is applied around the
        env by :class:`~ding.envs.from_config.ChainedEnv` (see :func:`~ding.envs.from_config.with_config_chain`).
        """
        own = cls.__mro__[: cls.__mro__.index(BaseEnv)]
        return any("env_wrapper" in klass.__dict__.get("config", {}) for klass in own)

    @classmethod
    def declares_spaces(cls) -> bool:
        """True when the class states its spaces without being built (it defines ``raw_spaces``)."""
        return cls.raw_spaces.__func__ is not BaseEnv.raw_spaces.__func__  # type: ignore[attr-defined]

    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The simulator's own spaces, before any wrapper, stated without constructing it.

        Not declaring them is allowed (DI-engine's style); the spaces are then probed by building
        one instance, and this raises :class:`~ding.errors.SpacesNotDeclaredError`.
        """
        raise SpacesNotDeclaredError(
            f"{cls.__name__} does not declare raw_spaces(cfg); its spaces are known only by building one instance "
            "(ding.envs.probe.probe_spaces). Declare raw_spaces to know them ahead of time."
        )

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        """The wrapper chain this env applies for ``cfg`` (none by default)."""
        return []

    @classmethod
    def spec_trace(cls, cfg: Mapping[str, Any]) -> list[tuple[str, EnvSpaces]]:
        """Spaces after each step: the raw env, then each wrapper of its chain (the last entry is what it exposes).

        Nothing is added after the chain: observations keep the dtypes the env and its wrappers declare (uint8
        frames stay uint8), and rewards the reward space's (float32 ``(1,)`` unless declared otherwise).
        """
        full = cls.merge_config(cfg)
        return cls.trace_from(cls.raw_spaces(full), full)

    @classmethod
    def trace_from(cls, raw: EnvSpaces, cfg: Mapping[str, Any]) -> list[tuple[str, EnvSpaces]]:
        """The spec trace starting from given raw spaces (``cfg`` already complete)."""
        return trace_spaces(raw, cls.wrapper_chain(cfg), train=bool(cfg.get("is_train", True)))

    @classmethod
    def trace_from_probe(
        cls, cfg: Mapping[str, Any], probe: Callable[[type[BaseEnv], Mapping[str, Any]], EnvSpaces]
    ) -> list[tuple[str, EnvSpaces]]:
        """The spec trace of a class that declares no ``raw_spaces``, from ``probe(env_class, cfg)``, the spaces of
        one built env (:func:`ding.envs.probe.spec_trace_of` passes its cached, out-of-process probe).

        By default the class itself is built and its spaces are the trace's one step; an env that runs another env
        class under a chain of its own (:class:`~ding.envs.from_config.ChainedEnv`) probes that class and traces its
        chain from there.
        """
        return [("env", probe(cls, cfg))]

    @classmethod
    def spaces_from_config(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The spaces an instance made with ``cfg`` exposes, computed without constructing it."""
        return cls.spec_trace(cfg)[-1][1]

    def _compute_spaces(self) -> EnvSpaces | None:
        """The instance's spaces; by default those its config declares (None when it declares none)."""
        if not type(self).declares_spaces():
            return None
        return type(self).spaces_from_config(self._cfg)

    def _space(self, kind: str) -> spaces.Space[Any]:
        """The instance's ``kind`` space: one assigned to it, else the declared one, else not known yet."""
        assigned = self.__dict__.get(f"_{kind}_space")
        if assigned is not None:
            return assigned  # type: ignore[no-any-return]
        declared = getattr(self, "_spaces", None)
        if declared is None and type(self).declares_spaces():
            # a DI-engine-style __init__ that did not call BaseEnv.__init__, on a class that declares its spaces
            declared = self._spaces = type(self).spaces_from_config(getattr(self, "_cfg", None) or {})
        if declared is not None:
            return getattr(declared, kind)  # type: ignore[no-any-return]
        if kind == "reward":
            return DEFAULT_REWARD_SPACE
        raise SpacesNotKnownError(
            f"{type(self).__name__}.{kind}_space is not known: the class declares no raw_spaces, and the instance "
            f"has not set it (set self._{kind}_space, or override the property; a DI-engine-style env may set it "
            "in reset, so read it after reset)"
        )

    @property
    def observation_space(self) -> spaces.Space[Any]:
        return self._space("observation")

    @observation_space.setter
    def observation_space(self, space: spaces.Space[Any]) -> None:
        self._observation_space = space

    @property
    def action_space(self) -> spaces.Space[Any]:
        return self._space("action")

    @action_space.setter
    def action_space(self, space: spaces.Space[Any]) -> None:
        self._action_space = space

    @property
    def reward_space(self) -> spaces.Space[Any]:
        return self._space("reward")

    @reward_space.setter
    def reward_space(self, space: spaces.Space[Any]) -> None:
        self._reward_space = space

    # ----- the env interface ---------------------------------------------------------------------
    @abstractmethod
    def reset(self) -> Any:
        """Start an episode and return its first observation."""

    @abstractmethod
    def step(self, action: Any) -> BaseEnvTimestep:
        """Apply one action."""

    @abstractmethod
    def close(self) -> None:
        """Release the simulator; calling it twice is harmless."""

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the env.

        With ``dynamic_seed`` (collectors) each reset draws a new episode seed from the env's
        :class:`~ding.envs.values.seeding.EpisodeSeeds` stream (over ``[0, 2**32)``), so episodes differ but
        the sequence is reproducible; without it (evaluators) every reset uses ``seed`` itself, so
        every episode starts the same way.
        """
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise TypeError(f"seed must be an int, got {seed!r} ({type(seed).__name__})")
        self._seed = int(seed)
        self._dynamic_seed = bool(dynamic_seed)
        self._episode_seeds = EpisodeSeeds(self._seed)
        self._action_space_seeded = False
        self._seed_action_space()

    def _seed_action_space(self) -> None:
        """Seed the action space with the last seed, once after each ``seed`` and once the space is known.

        Envs may know their action space only after ``reset``, and a DI-engine-style ``seed`` override
        sets only ``_seed``; both get their action space seeded by the first ``random_action``.
        """
        seed: int | None = getattr(self, "_seed", None)
        if seed is None or getattr(self, "_action_space_seeded", False):
            return
        try:
            space = self.action_space
        except AttributeError:  # not known yet (SpacesNotKnownError, or a DI-engine property before reset)
            return
        space.seed(seed)
        self._action_space_seeded = True

    def _next_episode_seed(self) -> int | None:
        """The seed the next reset should pass to the simulator (None when never seeded)."""
        seed: int | None = getattr(self, "_seed", None)
        if seed is None:
            return None
        if getattr(self, "_dynamic_seed", True):
            stream = getattr(self, "_episode_seeds", None)
            if stream is None or stream.seed != seed:  # seeded by a subclass's own seed(), which set only _seed
                stream = self._episode_seeds = EpisodeSeeds(seed)
            return stream.draw()
        return seed

    # ----- the current time step and the env's state (TF-Agents' PyEnvironment) --------------------
    def current_time_step(self) -> BaseEnvTimestep | None:
        """The last ``step``'s timestep; after ``reset`` a first one (its observation, a zero reward of the reward
        space's shape and dtype, ``done`` False); None before the first ``reset``."""
        record = self._ding_time_step
        if isinstance(record, _Started):
            space = self.reward_space
            dtype = np.float32 if space.dtype is None else space.dtype
            return BaseEnvTimestep(record.obs, np.zeros(space.shape or (1,), dtype), False, {})
        return record  # type: ignore[no-any-return]

    def current_step_type(self) -> StepType | None:
        """:attr:`StepType.FIRST` after ``reset``, ``LAST`` after a step that ended the episode (for every agent
        of a multi-agent env), ``MID`` after any other step; None before the first ``reset``."""
        record = self._ding_time_step
        if record is None:
            return None
        if isinstance(record, _Started):
            return StepType.FIRST
        return StepType.LAST if bool(np.all(record.done)) else StepType.MID

    def should_reset(self) -> bool:
        """True when the next call must be ``reset``: before the first one, and after the episode ended."""
        return self.current_step_type() in (None, StepType.LAST)

    def get_state(self) -> Any:
        """The env's whole state, as a token for :meth:`set_state` (the env never changes it afterwards).

        This base class has none: an env that supports it overrides both methods.
        """
        raise self._no_state()

    def set_state(self, state: Any) -> None:
        """Put the env back into ``state`` (from :meth:`get_state`); stepping on repeats what followed it."""
        raise self._no_state()

    def _no_state(self) -> StateNotSupportedError:
        return StateNotSupportedError(
            f"{type(self).__name__} does not support get_state / set_state; DingEnvWrapper (and the dizoo envs "
            "built on it) supports them for classic control, MuJoCo, ALE and dm_control simulators, and an env "
            "class may implement both"
        )

    def render(self) -> Any:
        """Return a rendered frame (RGB array) where the env supports it."""
        raise NotImplementedError(f"{type(self).__name__} does not render")

    def random_action(self) -> Any:
        """A random action from the action space (seeded by :meth:`seed`), in DI-engine's form.

        A ``Discrete`` action comes as an int64 array of shape ``(1,)`` (as DI-engine's envs give
        it); Box, MultiDiscrete and MultiBinary actions as arrays; Dict and Tuple actions nest
        these forms, with ``Discrete`` leaves as int64 arrays of shape ``()``.
        """
        self._seed_action_space()
        space = self.action_space
        return as_action_array(space.sample(), space, top=True)

    def enable_save_replay(self, replay_path: str) -> None:
        """Save a video of each following episode into the directory ``replay_path``."""
        self._replay_path = str(replay_path)

    # ----- config helpers for collectors and evaluators ------------------------------------------
    @staticmethod
    def create_collector_env_cfg(cfg: Mapping[str, Any]) -> list[EasyDict]:
        """``collector_env_num`` independent copies of ``cfg`` for training envs (``cfg`` is not modified)."""
        return _copies(cfg, "collector_env_num", is_train=True)

    @staticmethod
    def create_evaluator_env_cfg(cfg: Mapping[str, Any]) -> list[EasyDict]:
        """``evaluator_env_num`` independent copies of ``cfg`` for evaluation envs (``cfg`` is not modified)."""
        return _copies(cfg, "evaluator_env_num", is_train=False)

    def __repr__(self) -> str:
        try:
            return f"{type(self).__name__}(obs={self.observation_space}, act={self.action_space})"
        except AttributeError:  # SpacesNotKnownError, or a DI-engine-style property read before reset
            return f"{type(self).__name__}(spaces not known yet)"

    def __enter__(self) -> BaseEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _recording_reset(reset: Callable[..., Any]) -> Callable[..., Any]:
    """``reset`` that also records the first time step (see :meth:`BaseEnv.current_time_step`)."""

    @functools.wraps(reset)
    def recorded(self: BaseEnv, *args: Any, **kwargs: Any) -> Any:
        obs = reset(self, *args, **kwargs)
        self._ding_time_step = _Started(obs)
        return obs

    return recorded


def _recording_step(step: Callable[..., Any]) -> Callable[..., Any]:
    """``step`` that also records the time step it returns."""

    @functools.wraps(step)
    def recorded(self: BaseEnv, *args: Any, **kwargs: Any) -> Any:
        timestep = step(self, *args, **kwargs)
        self._ding_time_step = timestep
        return timestep

    return recorded


def as_action_array(sample: Any, space: spaces.Space[Any], *, top: bool = False) -> Any:
    """A sample of ``space`` as arrays: DI-engine's form of a random action (see :meth:`BaseEnv.random_action`).

    >>> as_action_array(1, spaces.Discrete(3), top=True)
    array([1])
    """
    if isinstance(space, spaces.Dict):
        return {key: as_action_array(sample[key], sub) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return tuple(as_action_array(part, sub) for part, sub in zip(sample, space.spaces, strict=True))
    if isinstance(space, spaces.Discrete):
        value = np.asarray(sample, dtype=np.int64)
        return value.reshape(1) if top else value.reshape(())
    return np.asarray(sample)


def _copies(cfg: Mapping[str, Any], count_key: str, *, is_train: bool) -> list[EasyDict]:
    number = cfg.get(count_key, plain_defaults(COMMON_ENV_CONFIG)[count_key])
    check_value(COMMON_ENV_CONFIG, count_key, number, f"env.{count_key}")
    out = []
    for _ in range(number):
        copy_cfg = EasyDict(copy.deepcopy(dict(cfg)))
        copy_cfg.is_train = is_train
        out.append(copy_cfg)
    return out
