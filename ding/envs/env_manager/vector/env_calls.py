"""The envs' own attributes and methods, reached through a manager (gymnasium's ``call`` / ``get_attr`` / ``set_attr``).

Every manager answers two requests for its envs, wherever they run: what a name is on each env (a value, a method,
or missing) and a call of a method on chosen envs. This module is the one place the vector env uses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ding.envs.env_manager.base_manager import BaseEnvManager
from ding.envs.env_manager.fanout import METHOD, MISSING

EPISODE_METHODS = ("reset", "step", "close")
"""Env methods only the vector env itself calls: a call behind the manager's back would desynchronise it."""


class EnvCalls:
    """Attributes and methods of a manager's envs, by name; the manager must be launched."""

    def __init__(self, manager: BaseEnvManager) -> None:
        self._manager = manager
        self._offers: dict[str, bool] = {}

    def describe(self, name: str) -> dict[int, tuple[Any, ...]]:
        """What ``name`` is on each env: ``MISSING``, ``METHOD`` or ``("value", value)``."""
        return self._manager.describe_envs(name)

    def call(
        self, name: str, env_ids: Sequence[int] | None, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None
    ) -> dict[int, Any]:
        """Call method ``name`` of the envs ``env_ids`` (None: every env) with ``args``; results by env id."""
        return self._manager.call_envs(name, args, kwargs, env_ids)

    def offers(self, name: str) -> bool:
        """Whether the envs have a method ``name`` (env 0 answers once for the batch, which runs one env type)."""
        if name not in self._offers:
            self._offers[name] = self.describe(name)[0] == METHOD
        return self._offers[name]

    def values(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """Each env's ``name``: called with ``args`` and ``kwargs`` where it is a method, else its value.

        Raises:
            AttributeError: Some env has no attribute ``name``.
            ValueError: ``name`` is ``reset``, ``step`` or ``close``, which the vector env's own methods do.
        """
        _check_callable_by_name(name)
        described = self.describe(name)
        missing = sorted(env_id for env_id, kind in described.items() if kind == MISSING)
        if missing:
            raise AttributeError(f"envs {missing} have no attribute {name!r}")
        methods = [env_id for env_id, kind in described.items() if kind == METHOD]
        results = self.call(name, methods, args, kwargs) if methods else {}
        return tuple(results[i] if i in results else described[i][1] for i in range(len(described)))

    def set(self, name: str, values: Sequence[Any]) -> None:
        """Set ``name`` to ``values[i]`` on env ``i``: through the env's ``set_wrapper_attr`` when it has one."""
        for env_id, value in enumerate(values):
            self.set_one(env_id, name, value)

    def set_one(self, env_id: int, name: str, value: Any) -> None:
        """Set ``name`` to ``value`` on env ``env_id`` (through its ``set_wrapper_attr`` when it has one)."""
        setter = "set_wrapper_attr" if self.offers("set_wrapper_attr") else "__setattr__"
        self.call(setter, [env_id], (name, value))

    def final_observations(self, final_obs: dict[int, Any]) -> dict[int, Any]:
        """The last observations of ended episodes as the envs returned them, where envs keep them
        (``last_step_observation()``, e.g. a Python ``int`` rather than ding's array); else ``final_obs``."""
        if not final_obs or not self.offers("last_step_observation"):
            return final_obs
        return self.call("last_step_observation", sorted(final_obs))

    def reset_infos(self, env_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The info of each env's last reset, for envs that keep it (a ``reset_info()`` method); else none."""
        if not env_ids or not self.offers("reset_info"):
            return {}
        return self.call("reset_info", env_ids)


def _check_callable_by_name(name: str) -> None:
    if name in EPISODE_METHODS:
        raise ValueError(
            f"call({name!r}) would {name} envs behind the vector env's back; use the vector env's own {name}()"
        )


class EnvView:
    """One env of a vector env, wherever it runs: its attributes are read, set and called through the manager.

    gymnasium's ``SyncVectorEnv.envs`` holds the env objects; a manager's envs may live in worker processes, so
    ``ManagerVectorEnv.envs[i]`` is this view. Reading an attribute gives its value (a copy when the env runs in
    another process: change it through the view, not the copy), a method gives a function calling it in the env,
    and setting an attribute sets it where ``set_attr`` would. ``reset``, ``step`` and ``close`` are the vector
    env's own.

    Example:
        >>> import gymnasium as gym
        >>> from ding.envs.env_manager import make_vector_env
        >>> from ding.envs.env_manager.vector import gymnasium_env_fn
        >>> with make_vector_env({'type': 'base'}, [gymnasium_env_fn(lambda: gym.make('CartPole-v1'))] * 2) as envs:
        ...     envs.envs[1].gravity = 3.0
        ...     envs.envs[0].gravity, envs.envs[1].gravity, envs.envs[1].spec.id
        (9.8, 3.0, 'CartPole-v1')
    """

    __slots__ = ("_before_change", "_calls", "_env_id")

    def __init__(self, calls: EnvCalls, env_id: int, before_change: Callable[[], None] = lambda: None) -> None:
        object.__setattr__(self, "_calls", calls)
        object.__setattr__(self, "_env_id", env_id)
        object.__setattr__(self, "_before_change", before_change)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # copy / pickle protocols ask for these; the env's own are not the view's
            raise AttributeError(name)
        kind = self._calls.describe(name)[self._env_id]
        if kind == MISSING:
            raise AttributeError(f"env {self._env_id} has no attribute {name!r}")
        if kind == METHOD:
            return self._method(name)
        return kind[1]

    def __setattr__(self, name: str, value: Any) -> None:
        self._before_change()
        self._calls.set_one(self._env_id, name, value)

    def __repr__(self) -> str:
        return f"EnvView(env {self._env_id})"

    def _method(self, name: str) -> Callable[..., Any]:
        _check_callable_by_name(name)

        def call(*args: Any, **kwargs: Any) -> Any:
            self._before_change()
            return self._calls.call(name, [self._env_id], args, kwargs)[self._env_id]

        call.__name__ = name
        return call
