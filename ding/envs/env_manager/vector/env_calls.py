"""The envs' own attributes and methods, reached through a manager (gymnasium's ``call`` / ``get_attr`` / ``set_attr``).

Every manager answers two requests for its envs, wherever they run: what a name is on each env (a value, a method,
or missing) and a call of a method on chosen envs. This module is the one place the vector env uses them.
"""

from __future__ import annotations

from collections.abc import Sequence
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
        if name in EPISODE_METHODS:
            raise ValueError(
                f"call({name!r}) would {name} envs behind the vector env's back; use the vector env's own {name}()"
            )
        described = self.describe(name)
        missing = sorted(env_id for env_id, kind in described.items() if kind == MISSING)
        if missing:
            raise AttributeError(f"envs {missing} have no attribute {name!r}")
        methods = [env_id for env_id, kind in described.items() if kind == METHOD]
        results = self.call(name, methods, args, kwargs) if methods else {}
        return tuple(results[i] if i in results else described[i][1] for i in range(len(described)))

    def set(self, name: str, values: Sequence[Any]) -> None:
        """Set ``name`` to ``values[i]`` on env ``i``: through the env's ``set_wrapper_attr`` when it has one."""
        setter = "set_wrapper_attr" if self.offers("set_wrapper_attr") else "__setattr__"
        for env_id, value in enumerate(values):
            self.call(setter, [env_id], (name, value))

    def reset_infos(self, env_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The info of each env's last reset, for envs that keep it (a ``reset_info()`` method); else none."""
        if not env_ids or not self.offers("reset_info"):
            return {}
        return self.call("reset_info", env_ids)
