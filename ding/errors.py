"""The project's error hierarchy.

Every error a user can provoke derives from :class:`DingError` and from the builtin
that describes it best (``ValueError`` for wrong values, ``TypeError`` for wrong types),
so callers may catch either.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DingError(Exception):
    """Base class of every error raised by ding."""


class UnknownNameError(DingError, ValueError):
    """A registry, preset or config lookup used a name that is not known."""


class ConfigError(DingError, ValueError):
    """A configuration holds an unknown key or a value that is not accepted."""


class ConfigTypeError(ConfigError, TypeError):
    """A config value of a type its key does not take (a str for a count, a list for a rate).

    It is also a ``TypeError``: a wrong type, where a plain :class:`ConfigError` is a wrong value of the right type.
    """


class UnknownConfigKeyError(ConfigError, RuntimeError):
    """A config merge met a key the defaults do not have.

    It is also a ``RuntimeError``, which is what DI-engine's ``deep_update`` raises for the same case.
    """


class ShapeRuleError(DingError, ValueError):
    """A wrapper's shape rule cannot be applied to the shapes or spaces it was given."""


class SpaceKindError(ShapeRuleError, TypeError):
    """A wrapper's rule met a kind of space it does not take (a Discrete where it needs a Box, say).

    A :class:`ShapeRuleError` (the rule cannot apply) and a ``TypeError`` (a wrong type of space).
    """


class FieldPathError(DingError, ValueError):
    """A nested ``"a.b.c"`` field path does not exist in an observation or space."""


class EnvSpecError(DingError, ValueError):
    """An environment's spaces cannot be determined from its config."""


class BatchSpecError(EnvSpecError, RuntimeError):
    """The envs of a vector env do not have the spaces its batch needs.

    It is also a ``RuntimeError``, which is what gymnasium's vector envs raise for the same case.
    """


class SpacesNotDeclaredError(EnvSpecError):
    """An env class does not state its spaces ahead of time; they are known only by building it (probing)."""


class SpacesNotKnownError(SpacesNotDeclaredError, AttributeError):
    """An env's spaces were read before it knows them (a DI-engine-style env that sets them in ``reset``).

    It is also an ``AttributeError``, so ``getattr(env, 'observation_space', None)`` and ``hasattr``
    treat the space as not there yet, as for a DI-engine env that has not set the attribute.
    """


class EnvConformanceError(DingError, AssertionError):
    """An env breaks a rule of ding's env interface (:mod:`ding.envs.conformance`).

    It is also an ``AssertionError``, as DI-engine's env implementation checks raise.
    """


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """Return ``" Did you mean 'x'?"`` for the closest known name, or ``""``.

    >>> did_you_mean('frame_stak', ['frame_stack', 'warp_frame'])
    " Did you mean 'frame_stack'?"
    """
    known = list(known)
    match = difflib.get_close_matches(str(name), known, n=1, cutoff=0.6)
    if not match:
        match = [k for k in known if str(name) and (k.startswith(str(name)) or str(name) in k)][:1]
    return f" Did you mean {match[0]!r}?" if match else ""


def unknown_name_message(kind: str, name: object, known: Iterable[str]) -> str:
    """Build the standard message for an unknown name: the name, every known one and a close match."""
    known_sorted = sorted(known)
    return (
        f"unknown {kind} {name!r}; known: {', '.join(known_sorted) or '(none)'}.{did_you_mean(str(name), known_sorted)}"
    )


class EnvManagerError(DingError, RuntimeError):
    """An env manager cannot go on: misuse (closed, not launched) or a fault past its retry budget."""

    traceback_text = ""

    @property
    def summary(self) -> str:
        """One line for ``info['error']`` of an abnormal timestep."""
        return f"{type(self).__name__}: {self}"


class ManagerStateError(EnvManagerError, AssertionError):
    """A manager used in a state that does not allow the call: closed, or not launched yet.

    It is also an ``AssertionError``, which is what DI-engine's managers raise for the same misuse.
    """


class EnvStepError(EnvManagerError):
    """An env raised in ``reset`` or ``step``; carries the env id and the original traceback text."""

    def __init__(self, env_id: int, operation: str, exc_type: str, message: str, traceback_text: str) -> None:
        self.env_id = env_id
        self.operation = operation
        self.exc_type = exc_type
        self.message = message
        self.traceback_text = traceback_text
        super().__init__(
            f"env {env_id} raised {exc_type} in {operation}: {message}\n--- original traceback ---\n{traceback_text}"
        )

    @property
    def summary(self) -> str:
        return f"{self.exc_type} in {self.operation}: {self.message}"


class WorkerDiedError(EnvManagerError):
    """A worker process exited or was killed while it held envs."""


class WorkerTimeoutError(EnvManagerError, TimeoutError):
    """A worker did not answer within its step or reset timeout."""


class EnvStateError(DingError, ValueError):
    """An env state cannot be taken or restored: a token of another env, or one that does not fit this env."""


class StateNotSupportedError(EnvStateError, NotImplementedError):
    """The env's simulator gives no access to its state."""


class ActionError(DingError, ValueError):
    """An action the action space does not accept: out of range or bounds, not finite, or of the wrong size."""
