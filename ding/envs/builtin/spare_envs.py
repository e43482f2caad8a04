"""``SpareEnvs``: one env whose slow resets are hidden by spare instances reset in the background.

A :class:`SpareEnvs` holds ``1 + spare_envs`` instances of an env. One is active and is stepped; the others are
spares, reset (or being reset) by a small thread pool. A ``reset`` after the first swaps in the spare that has been
ready longest and hands the instance it replaces to the pool for its reset, so the caller waits for a reset only
when every spare is still busy. The first ``reset`` (and the first after ``seed``) resets the active instance in
the calling thread and starts the spares' resets in the background.

It is an ordinary ``BaseEnv``, so every env manager can run it: build it with :func:`with_spare_envs` (a picklable
constructor that also tells a manager the spaces), or name it in a config as env type ``spare_envs`` with the
wrapped env's config under ``env``::

    env=dict(type='spare_envs', spare_envs=2, env=dict(type='mujoco', env_id='Hopper-v5', import_names=[...]))

**Seeds.** ``seed(s, dynamic_seed)`` seeds the ``SpareEnvs`` itself; each reset hands the instance that will play
the episode its episode seed through ``instance.seed(e, dynamic_seed=False)``. Episode ``j`` (counting from the
first reset after ``seed``) is played with the ``j``-th seed of the episode-seed stream of ``s``
(``dynamic_seed=True``) or with ``s`` (``dynamic_seed=False``) — the seeds a single env seeded with ``s`` would
use for its episode ``j``. For an env that passes its episode seed to the simulator at reset (every
:class:`~ding.envs.DingEnvWrapper` and dizoo env), episode ``j`` therefore replays exactly: the same observations,
rewards and ends for the same actions, with or without spares and whatever the timing of the background resets.
Randomness an env draws outside its reset seed (for instance its own ``random_action`` stream) is not covered.

**Errors.** An exception raised by a background reset is raised, with its traceback and a note naming the
instance, by the ``reset`` that would swap that instance in; the next ``reset`` then resets every instance anew.
``close`` waits for the background resets, closes every instance and warns about a background failure that no
``reset`` reached.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, ClassVar

from gymnasium import spaces

from ding.envs.base_env import BaseEnv
from ding.envs.env_manager.env_fn import EnvFn, declared_spaces
from ding.envs.env_registry import ENV_REGISTRY
from ding.envs.env_wrappers.arguments import NonNegativeInt, check_argument
from ding.envs.from_config import env_class
from ding.envs.spaces import EnvSpaces
from ding.envs.timestep import BaseEnvTimestep
from ding.errors import ConfigError, SpacesNotDeclaredError
from ding.utils.accepts import count


@ENV_REGISTRY.register("spare_envs")
class SpareEnvs(BaseEnv):
    """An env that keeps ``spare_envs`` extra instances of an env reset in the background (see the module doc).

    Args:
        cfg: ``spare_envs`` (the number of spare instances, >= 0) and, when ``env_fn`` is not given, ``env``: the
            config of a registered env (its ``type`` and ``import_names``), built as ``cls(cfg.env)``.
        env_fn: builds one instance of the wrapped env (called ``1 + spare_envs`` times).

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> env = SpareEnvs({'spare_envs': 1}, env_fn=partial(CartPoleEnv, cfg={}))
        >>> env.observation_space.shape, env.instance_count
        ((4,), 2)
        >>> env.seed(0)
        >>> obs = env.reset()
        >>> while not env.step(env.random_action()).done:
        ...     pass
        >>> obs = env.reset()   # the spare, reset in the background, becomes active
        >>> env.close()
    """

    config: ClassVar[dict[str, Any]] = {"spare_envs": count(1, low=0, note="instances reset ahead"), "env": {}}

    def __init__(self, cfg: Mapping[str, Any] | None = None, *, env_fn: EnvFn | None = None) -> None:
        super().__init__(cfg)
        self._spare_count: int = self._cfg.spare_envs
        if env_fn is None:
            env_fn = _configured_env_fn(self._cfg.env)
        elif self._cfg.env:
            raise ConfigError(
                f"spare_envs: give the wrapped env as env_fn or as cfg.env, not both; got {self._cfg.env}"
            )
        self._env_fn = env_fn
        if self._spaces is None:
            self._spaces = declared_spaces(env_fn)
        self._envs: list[Any] = [env_fn() for _ in range(1 + self._spare_count)]
        self._active = 0
        self._spares: deque[tuple[int, Future[Any]]] = deque()  # (instance, its reset) in the order they are used
        self._pool: ThreadPoolExecutor | None = None
        self._started = False
        self._closed = False

    # ----- spaces -----------------------------------------------------------------------------------
    @classmethod
    def raw_spaces(cls, cfg: Mapping[str, Any]) -> EnvSpaces:
        """The wrapped env's spaces, when ``cfg.env`` names a registered env class that declares them."""
        inner = cfg.get("env") or {}
        if not inner:
            raise SpacesNotDeclaredError(
                "spare_envs: the spaces are those of the wrapped env; this config names none under 'env' "
                "(built with env_fn, the instance knows them: use with_spare_envs for a constructor that tells them)"
            )
        return env_class(inner).spaces_from_config(inner)

    def _compute_spaces(self) -> EnvSpaces | None:
        return type(self).spaces_from_config(self._cfg) if self._cfg.env else None

    def _space(self, kind: str) -> spaces.Space[Any]:
        if self._spaces is not None:
            return getattr(self._spaces, kind)  # type: ignore[no-any-return]
        return getattr(self._envs[self._active], f"{kind}_space")  # type: ignore[no-any-return]

    @property
    def instance_count(self) -> int:
        """How many instances of the wrapped env this holds: ``1 + spare_envs``."""
        return len(self._envs)

    @property
    def instances(self) -> tuple[Any, ...]:
        """Every instance of the wrapped env, the active one among them."""
        return tuple(self._envs)

    @property
    def active_env(self) -> Any:
        """The instance that the current episode is played on."""
        return self._envs[self._active]

    # ----- the env interface --------------------------------------------------------------------------
    def seed(self, seed: int, dynamic_seed: bool = True) -> None:
        """Seed the episodes that follow (see the module doc); the next ``reset`` resets every instance anew."""
        super().seed(seed, dynamic_seed)
        self._started = False

    def reset(self) -> Any:
        """Start an episode: on a ready spare, or on a fresh reset of every instance the first time."""
        if self._closed:
            raise RuntimeError("spare_envs: reset after close; build a new env")
        if not self._started:
            return self._reset_all()
        if not self._spares:  # no spare instances: reset the active one here
            return self._reset_instance(self._active, self._next_episode_seed())
        index, future = self._spares.popleft()
        try:
            obs = future.result()
        except BaseException as error:
            self._started = False  # the failed instance is in no queue: the next reset resets every instance
            error.add_note(f"raised by the background reset of spare_envs instance {index}")
            raise
        self._spares.append((self._active, self._submit(self._active)))
        self._active = index
        return obs

    def step(self, action: Any) -> BaseEnvTimestep:
        return self._envs[self._active].step(action)  # type: ignore[no-any-return]

    def render(self) -> Any:
        return self._envs[self._active].render()

    def enable_save_replay(self, replay_path: str) -> None:
        super().enable_save_replay(replay_path)
        for env in self._envs:
            env.enable_save_replay(replay_path)

    def close(self) -> None:
        """Wait for the background resets, then close every instance; calling it twice is harmless."""
        if self._closed:
            return
        self._closed = True
        self._drain()
        for env in self._envs:
            env.close()

    # ----- the background resets ------------------------------------------------------------------------
    def _reset_all(self) -> Any:
        self._drain()
        obs = self._reset_instance(self._active, self._next_episode_seed())
        others = [i for i in range(len(self._envs)) if i != self._active]
        self._spares.extend((i, self._submit(i)) for i in others)
        self._started = True
        return obs

    def _submit(self, index: int) -> Future[Any]:
        """Start resetting instance ``index`` in the background, with the next episode seed."""
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self._spare_count, thread_name_prefix="spare_envs")
        return self._pool.submit(self._reset_instance, index, self._next_episode_seed())

    def _reset_instance(self, index: int, episode_seed: int | None) -> Any:
        env = self._envs[index]
        if episode_seed is not None:
            env.seed(episode_seed, dynamic_seed=False)
        return env.reset()

    def _drain(self) -> None:
        """Wait for every background reset and stop the pool's threads; warn about failures no reset reached."""
        pending, self._spares = list(self._spares), deque()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
        for index, future in pending:
            error = future.exception()
            if error is not None:
                warnings.warn(
                    f"spare_envs: the background reset of instance {index} raised {type(error).__name__}: {error} "
                    "(discarded with that instance's episode)",
                    RuntimeWarning,
                    stacklevel=3,
                )


def _configured_env_fn(env_cfg: Mapping[str, Any]) -> EnvFn:
    if not env_cfg:
        raise ConfigError(
            "spare_envs: no env to wrap; give env_fn, or the wrapped env's config (with its 'type') under 'env'"
        )
    return functools.partial(env_class(env_cfg), env_cfg)


@dataclasses.dataclass(frozen=True)
class SpareEnvsFn:
    """A picklable constructor of :class:`SpareEnvs` that also tells a manager its spaces (``env_spaces``)."""

    env_fn: EnvFn
    spare_envs: int

    def __call__(self) -> SpareEnvs:
        return SpareEnvs({"spare_envs": self.spare_envs}, env_fn=self.env_fn)

    @property
    def env_spaces(self) -> EnvSpaces | None:
        """The wrapped constructor's declared spaces (None when only building an instance tells them)."""
        return declared_spaces(self.env_fn)


def with_spare_envs(env_fn: EnvFn, spare_envs: int = 1) -> SpareEnvsFn:
    """A constructor of ``env_fn``'s env with ``spare_envs`` spare instances, for any env manager.

    Example:
        >>> from functools import partial
        >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
        >>> from ding.envs.env_manager import BaseEnvManager
        >>> fns = [with_spare_envs(partial(CartPoleEnv, cfg={}), spare_envs=1) for _ in range(2)]
        >>> fns[0].env_spaces.action
        Discrete(2)
        >>> manager = BaseEnvManager(fns, {})
        >>> manager.seed(0)
        >>> manager.launch()
        >>> sorted(manager.ready_obs_id)
        [0, 1]
        >>> manager.close()
    """
    spares = check_argument("with_spare_envs", "spare_envs", spare_envs, NonNegativeInt)
    if not callable(env_fn):
        raise TypeError(f"with_spare_envs: env_fn must be callable (it builds one env), got {env_fn!r}")
    return SpareEnvsFn(env_fn, spares)
