"""The closed set of control commands a manager sends its workers (steps travel as wake-up bytes, not commands).

>>> Command(CommandKind.SEED, {0: (7, True)}).kind
<CommandKind.SEED: 'seed'>
>>> Command("seed").kind is CommandKind.SEED
True
>>> Command("sed")
Traceback (most recent call last):
...
ding.errors.UnknownNameError: unknown worker command 'sed'; known: actions, attach, call, close, declared, getattr, \
renew, replay, reset, seed, spaces. Did you mean 'seed'?
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from ding.errors import UnknownNameError, unknown_name_message


class CommandKind(enum.Enum):
    """What a worker is asked to do; the value names it in errors and failure reports."""

    ATTACH = "attach"
    """Map the step buffers of a :class:`~ding.envs.env_manager.core.shm.BufferLayout`."""
    SPACES = "spaces"
    """Report each built env's spaces."""
    DECLARED = "declared"
    """Report, per env, whether its class declares its spaces."""
    RESET = "reset"
    """Reset envs with keyword arguments (env id -> kwargs)."""
    ACTIONS = "actions"
    """Take the next step's actions as objects (layouts without an action buffer)."""
    SEED = "seed"
    """Seed envs (env id -> (seed, dynamic))."""
    REPLAY = "replay"
    """Save replays of envs (env id -> directory)."""
    RENEW = "renew"
    """Close and rebuild envs (a list of env ids)."""
    GETATTR = "getattr"
    """Describe one attribute of every env."""
    CALL = "call"
    """Call a method on envs: (name, args, kwargs, env ids or None)."""
    CLOSE = "close"
    """Close the envs and stop serving."""

    @classmethod
    def of(cls, value: CommandKind | str) -> CommandKind:
        """The kind ``value`` is or names; an unknown name raises, naming the known ones."""
        if isinstance(value, cls):
            return value
        try:
            return cls(value)
        except ValueError:
            raise UnknownNameError(unknown_name_message("worker command", value, [k.value for k in cls])) from None


@dataclasses.dataclass(frozen=True)
class Command:
    """A control message to a worker: its ``kind`` (a name is accepted and checked) and what it acts on."""

    kind: CommandKind
    payload: Any = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", CommandKind.of(self.kind))

    @property
    def name(self) -> str:
        """The kind's name, as errors and failure reports show it."""
        return self.kind.value
