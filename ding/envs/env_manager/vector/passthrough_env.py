"""``GymnasiumPassthroughEnv``: a gymnasium env as a ding env that keeps gymnasium's own behaviour, for vector envs.

:class:`~ding.envs.DingEnvWrapper` turns a gymnasium env into a ding env the DI-engine way: it adds
``eval_episode_return`` to the infos and draws a fresh seed for every episode. A vector env that should act as
gymnasium's ``SyncVectorEnv`` needs the env unchanged instead, which this subclass gives:

- no wrapper chain: observations, rewards and infos are the env's own (observations and rewards as arrays of
  their spaces' dtypes, as every ding env gives them);
- gymnasium's seeding: ``seed(s)`` seeds the next reset only (``env.reset(seed=s)``); later episodes continue the
  env's random generator, as ``SyncVectorEnv.reset(seed=...)`` does;
- the info of the last reset and the last step's observation as the env returned it are kept
  (:meth:`GymnasiumPassthroughEnv.reset_info`, :meth:`GymnasiumPassthroughEnv.last_step_observation`), so a vector
  env can report them as gymnasium's do;
- public attributes the ding env lacks are read from the gymnasium env (``get_wrapper_attr``), and
  :meth:`GymnasiumPassthroughEnv.set_wrapper_attr` sets them where gymnasium would.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

from ding.envs.base_env import BaseEnv
from ding.envs.bridges.from_gymnasium import DingEnvWrapper
from ding.envs.env_manager.env_fn import env_class_of
from ding.envs.env_wrappers import WrapperChain
from ding.envs.values.spaces import EnvSpaces


class _LastReturns(gym.Wrapper[Any, Any, Any, Any]):
    """Keep the info of the last reset (ding envs return only the observation from ``reset``) and the observation of
    the last step exactly as the env returned it (ding envs hand out arrays of the space's dtype)."""

    def __init__(self, env: gym.Env[Any, Any]) -> None:
        super().__init__(env)
        self.last_info: dict[str, Any] = {}
        self.last_step_obs: Any = None

    def reset(self, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(**kwargs)
        self.last_info = info
        return obs, info

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.last_step_obs = obs
        return obs, reward, terminated, truncated, info


class GymnasiumPassthroughEnv(DingEnvWrapper):
    """A gymnasium env (an instance, as ``DingEnvWrapper`` takes it) with gymnasium's behaviour kept.

    Build one per worker with :func:`gymnasium_env_fn`, which takes the function that makes the gymnasium env.

    Example:
        >>> env = GymnasiumPassthroughEnv(gym.make('CartPole-v1'))
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> bool((obs == gym.make('CartPole-v1').reset(seed=0)[0]).all())  # reset(seed=0), as gymnasium's
        True
        >>> env.gravity, env.reset_info()  # an attribute of the gymnasium env; the last reset's info
        (9.8, {})
        >>> env.close()
    """

    _seed_pending = False
    """Whether the seed given to :meth:`seed` still waits for its reset."""
    _keeper: _LastReturns

    @classmethod
    def declares_spaces(cls) -> bool:
        """False: the spaces are the given env's, known once it is built."""
        return False

    @classmethod
    def config_of_call(cls, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """None: the spaces come from the env instance, not from a config."""
        return None

    @classmethod
    def wrapper_chain(cls, cfg: Mapping[str, Any]) -> WrapperChain:
        """No wrapper: observations, rewards and infos are the gymnasium env's own."""
        return []

    def _make_raw_env(self, render: bool = False) -> gym.Env[Any, Any]:
        if self._given_env is None:
            raise TypeError(
                "GymnasiumPassthroughEnv takes a gymnasium env instance (in env managers: gymnasium_env_fn(make))"
            )
        self._keeper = _LastReturns(self._given_env)
        return self._keeper

    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the next reset with ``seed``; later ones continue the env's generator (``dynamic_seed`` is ignored)."""
        super().seed(seed, dynamic_seed)
        self._seed_pending = True

    def _next_episode_seed(self) -> int | None:
        if not self._seed_pending:
            return None
        self._seed_pending = False
        return self._seed

    def reset_info(self) -> dict[str, Any]:
        """The info the gymnasium env returned from its last reset."""
        return dict(self._keeper.last_info)

    def last_step_observation(self) -> Any:
        """The observation the gymnasium env returned from its last step, as it returned it (e.g. a Python ``int``).

        A vector env reports it as an ended episode's ``final_obs``, as gymnasium's vector envs do.
        """
        return self._keeper.last_step_obs

    @property
    def gymnasium_env(self) -> gym.Env[Any, Any]:
        """The gymnasium env this ding env was given."""
        return self._keeper.env

    def get_wrapper_attr(self, name: str) -> Any:
        """``name`` of this ding env, else of the gymnasium env (looked up through its wrappers)."""
        if name in self.__dict__ or hasattr(type(self), name):
            return getattr(self, name)
        return self.gymnasium_env.get_wrapper_attr(name)

    def set_wrapper_attr(self, name: str, value: Any, *, force: bool = True) -> bool:
        """Set ``name`` where gymnasium would: here if this ding env has it, else in the gymnasium env; True when
        set (gymnasium's return).

        In the gymnasium env it goes to the first wrapper that has the attribute, else (``force``) onto the
        outermost one.
        """
        if name in self.__dict__ or hasattr(type(self), name):
            setattr(self, name, value)
            return True
        return bool(self.gymnasium_env.set_wrapper_attr(name, value, force=force))

    def __getattr__(self, name: str) -> Any:
        # Called only for names this object lacks; private names never reach the gymnasium env.
        keeper = self.__dict__.get("_keeper")
        if name.startswith("_") or keeper is None:
            raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")
        try:
            return keeper.env.get_wrapper_attr(name)
        except AttributeError:
            raise AttributeError(
                f"{type(self).__name__} has no attribute {name!r}, and its gymnasium env {keeper.env} has none either"
            ) from None


def _build(make: Callable[[], gym.Env[Any, Any]]) -> GymnasiumPassthroughEnv:
    return GymnasiumPassthroughEnv(make())


def gymnasium_env_fn(
    make: Callable[[], gym.Env[Any, Any]], spaces: EnvSpaces | None = None
) -> Callable[[], GymnasiumPassthroughEnv]:
    """An env constructor for ding's env managers: ``GymnasiumPassthroughEnv(make())``, built where the env runs.

    Args:
        make: Makes the gymnasium env.
        spaces: The env's spaces, when known: managers then need not build one env to probe them, check every
            built env against them, and pass actions through shared memory. The reward space is the env's
            ``reward_space`` if it declares one, else ding's default ``Box(-inf, inf, (1,), float32)``.

    Example:
        >>> env_fn = gymnasium_env_fn(lambda: gym.make('CartPole-v1'))
        >>> env = env_fn()
        >>> type(env).__name__, env.observation_space.shape
        ('GymnasiumPassthroughEnv', (4,))
        >>> env.close()
    """
    if not callable(make):
        raise TypeError(f"gymnasium_env_fn takes a function that makes a gymnasium env, got {make!r}")
    if spaces is not None and not isinstance(spaces, EnvSpaces):
        raise TypeError(f"spaces must be an EnvSpaces, got {type(spaces).__name__}")
    env_fn = functools.partial(_build, make)
    if spaces is not None:
        env_fn.env_spaces = spaces  # type: ignore[attr-defined]  # what managers read as declared spaces
    return env_fn


def _build_either(make: Callable[[], Any]) -> Any:
    env = make()
    if isinstance(env, BaseEnv):
        return env
    if isinstance(env, gym.Env):
        return GymnasiumPassthroughEnv(env)
    raise TypeError(f"an env constructor of a vector env made {env!r}: neither a ding env nor a gymnasium env")


def vector_env_fn(make: Callable[[], Any]) -> Callable[[], Any]:
    """An env constructor for a manager from ``make``, which makes a ding env or a gymnasium env.

    A ding env class (or a ``functools.partial`` of one) and :func:`gymnasium_env_fn`'s constructors are kept as
    they are, so spaces they declare stay known before any env is built. Any other callable is called where the
    env runs: a gymnasium env it makes becomes a :class:`GymnasiumPassthroughEnv`, a ding env is kept.

    Example:
        >>> env = vector_env_fn(lambda: gym.make('CartPole-v1'))()
        >>> type(env).__name__
        'GymnasiumPassthroughEnv'
        >>> env.close()
    """
    if not callable(make):
        raise TypeError(f"a vector env takes functions that make envs, got {make!r}")
    cls = env_class_of(make)
    if (cls is not None and issubclass(cls, BaseEnv)) or getattr(make, "func", None) is _build:
        return make
    return functools.partial(_build_either, make)
