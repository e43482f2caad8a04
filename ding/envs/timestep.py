"""The value an env's ``step`` returns."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any


@dataclasses.dataclass(frozen=True, slots=True)
class BaseEnvTimestep:
    """One step's result: DI-engine's ``(obs, reward, done, info)`` plus gymnasium's two end flags.

    It unpacks as the DI-engine 4-tuple; ``terminated`` (the MDP ended) and ``truncated`` (cut off,
    e.g. by a time limit) are explicit attributes. Built with only ``done``, a done step counts as
    terminated.

    Example:
        >>> ts = BaseEnvTimestep(obs=1, reward=0.5, done=True, info={}, truncated=True)
        >>> obs, reward, done, info = ts
        >>> ts.terminated, ts.truncated
        (False, True)
        >>> ts._replace(reward=1.0).reward
        1.0
    """

    obs: Any
    reward: Any
    done: bool
    info: dict[str, Any] = dataclasses.field(default_factory=dict)
    terminated: bool | None = None
    truncated: bool = False

    def __post_init__(self) -> None:
        if self.terminated is None:
            object.__setattr__(self, "terminated", bool(self.done) and not self.truncated)
        if bool(self.done) != bool(self.terminated or self.truncated):
            raise ValueError(
                f"inconsistent timestep: done={self.done} but terminated={self.terminated}, truncated={self.truncated}"
            )

    def __iter__(self) -> Iterator[Any]:
        return iter((self.obs, self.reward, self.done, self.info))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        return (self.obs, self.reward, self.done, self.info)[index]

    def _replace(self, **changes: Any) -> BaseEnvTimestep:
        return dataclasses.replace(self, **changes)

    def _asdict(self) -> dict[str, Any]:
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
