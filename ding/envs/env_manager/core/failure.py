"""One failure value: why an env or a worker has no result, carried from where it happened to the raised error.

An env's exception inside a worker is captured with its traceback as text (it crosses processes and hosts); a
worker that died, did not answer in time or broke its protocol is described where the manager notices it. Either
way the manager holds a :class:`Failure` and turns it into the error a caller sees with :meth:`Failure.error`.

>>> failure = Failure.capture(3, "step", ValueError("bad action"))
>>> failure.error().summary
'ValueError in step: bad action'
>>> Failure.died("worker 0 (pid 12, envs [0, 1]) died").error()
WorkerDiedError('worker 0 (pid 12, envs [0, 1]) died')
"""

from __future__ import annotations

import dataclasses
import enum
import traceback

from ding.errors import EnvManagerError, EnvStepError, WorkerDiedError, WorkerTimeoutError


class FailureKind(enum.Enum):
    """Where a failure came from."""

    ENV = "env"  # an env raised (in build, reset, step, or a call)
    DIED = "died"  # the worker exited, was killed, or its link is gone
    TIMEOUT = "timeout"  # the worker did not answer within its timeout
    BROKEN = "broken"  # the worker answered, but not as the protocol says (it is replaced)


@dataclasses.dataclass(frozen=True)
class Failure:
    """A failure as a value: picklable, comparable, and turned into the raised error in one place."""

    kind: FailureKind
    message: str
    env_id: int = -1  # the env that raised (ENV failures)
    operation: str = ""  # what the env was doing: build, reset, step, renew, or a command's name
    exc_type: str = ""  # the exception's class name (ENV failures)
    traceback_text: str = ""  # the original traceback (ENV failures)

    @classmethod
    def capture(cls, env_id: int, operation: str, exc: BaseException) -> Failure:
        """An env's exception, with its traceback as text."""
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(FailureKind.ENV, str(exc), env_id, operation, type(exc).__name__, text)

    @classmethod
    def died(cls, message: str) -> Failure:
        return cls(FailureKind.DIED, message)

    @classmethod
    def timeout(cls, message: str) -> Failure:
        return cls(FailureKind.TIMEOUT, message)

    @classmethod
    def broken(cls, message: str) -> Failure:
        return cls(FailureKind.BROKEN, message)

    @property
    def of_worker(self) -> bool:
        """Whether the worker itself failed (its envs are lost), not one env in it."""
        return self.kind is not FailureKind.ENV

    def error(self) -> EnvManagerError:
        """The error a caller sees: :class:`EnvStepError` (with the original traceback) or a worker error."""
        if self.kind is FailureKind.ENV:
            return EnvStepError(self.env_id, self.operation, self.exc_type, self.message, self.traceback_text)
        if self.kind is FailureKind.TIMEOUT:
            return WorkerTimeoutError(self.message)
        if self.kind is FailureKind.DIED:
            return WorkerDiedError(self.message)
        return EnvManagerError(self.message)
