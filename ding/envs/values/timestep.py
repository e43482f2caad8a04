"""The value an env's ``step`` returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np

_NEW_INFO: Any = object()
"""Stands for an omitted ``info``: each timestep built without one gets its own empty dict."""


@dataclasses.dataclass(frozen=True, init=False)
class BaseEnvTimestep:
    """One step's result: DI-engine's ``(obs, reward, done, info)`` plus gymnasium's two end flags.

    It behaves as DI-engine's namedtuple where that is cheap: built positionally from the four
    fields, unpacked and indexed as that 4-tuple (``len`` is 4), with ``_fields``, ``_make``,
    ``_replace`` and ``_asdict``. ding adds ``terminated`` (the MDP ended) and ``truncated`` (cut
    off, e.g. by a time limit), keyword-only in practice: built with only ``done``, a done step
    counts as terminated, and ``done`` always equals ``terminated or truncated``. The three flags
    are Python bools (a NumPy bool, or a one-element bool array, is converted; anything else is a
    ``TypeError``). ``_asdict`` returns all six fields, so
    ``BaseEnvTimestep(**ts._asdict())`` gives back an equal timestep. It is not a ``tuple``
    subclass, and it is immutable.

    Example:
        >>> ts = BaseEnvTimestep(obs=1, reward=0.5, done=True, info={}, truncated=True)
        >>> obs, reward, done, info = ts
        >>> ts.terminated, ts.truncated
        (False, True)
        >>> ts._replace(reward=1.0).reward
        1.0
        >>> BaseEnvTimestep._fields
        ('obs', 'reward', 'done', 'info')
    """

    _fields: ClassVar[tuple[str, ...]] = ("obs", "reward", "done", "info")

    obs: Any
    reward: Any
    done: bool
    info: dict[str, Any]
    terminated: bool | None
    truncated: bool

    def __init__(
        self,
        obs: Any,
        reward: Any,
        done: bool,
        info: dict[str, Any] = _NEW_INFO,
        terminated: bool | None = None,
        truncated: bool = False,
    ) -> None:
        # Built once per env step: Python bools (the common case) skip the conversion, and the fields are
        # written straight into the instance's dict (the frozen class refuses attribute assignment).
        flags = (done, terminated, truncated)
        if type(done) is not bool:
            done = _flag("done", done)
        if type(truncated) is not bool:
            truncated = _flag("truncated", truncated)
        if terminated is None:
            terminated = done and not truncated
        elif type(terminated) is not bool:
            terminated = _flag("terminated", terminated)
        if done != (terminated or truncated):
            raise ValueError(f"inconsistent timestep: done={flags[0]} but terminated={flags[1]}, truncated={flags[2]}")
        fields = self.__dict__
        fields["obs"] = obs
        fields["reward"] = reward
        fields["done"] = done
        fields["info"] = {} if info is _NEW_INFO else info
        fields["terminated"] = terminated
        fields["truncated"] = truncated

    def __iter__(self) -> Iterator[Any]:
        return iter((self.obs, self.reward, self.done, self.info))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int | slice) -> Any:
        return (self.obs, self.reward, self.done, self.info)[index]

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> BaseEnvTimestep:
        """Build from ``(obs, reward, done, info)``, as ``namedtuple._make`` does."""
        values = tuple(iterable)
        if len(values) != 4:
            raise TypeError(f"BaseEnvTimestep._make takes (obs, reward, done, info), got {len(values)} values")
        return cls(*values)

    def _replace(self, **changes: Any) -> BaseEnvTimestep:
        """A copy with ``changes``; a new ``done`` alone re-derives the end flags (a truncation stays one)."""
        if "done" in changes and "terminated" not in changes and "truncated" not in changes:
            done = bool(changes["done"])
            changes["truncated"] = done and self.truncated
            changes["terminated"] = done and not self.truncated
        return dataclasses.replace(self, **changes)

    def _asdict(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}


def _flag(name: str, value: Any) -> bool:
    """``value`` as a Python bool: a bool, a NumPy bool or a one-element NumPy bool array; else TypeError."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, np.ndarray) and value.dtype == np.bool_ and value.size == 1:
        return bool(value.reshape(()))
    raise TypeError(f"BaseEnvTimestep.{name} must be a bool, got {type(value).__name__} {value!r}")
