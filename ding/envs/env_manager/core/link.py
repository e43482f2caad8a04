"""The batch core's messages to and from its workers: step numbers, replies decoded, late or undecodable ones refused.

A :class:`WorkerLink` holds the channel (made at the first launch, opened at each) and knows what each worker was
last sent. Every step dispatch gets a number (:mod:`.sequence`); a step reply is delivered only when it answers the
step its worker was last sent, else it is dropped and counted (:attr:`WorkerLink.late_results`). A reply that does
not decode is refused and counted (:attr:`WorkerLink.refused_replies`). Either becomes the :class:`Failure` of a
broken worker, which the core replaces.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Sequence
from typing import Any

from ding.envs.env_manager.core.channel import Channel, Reply
from ding.envs.env_manager.core.codec import RefusedDataError
from ding.envs.env_manager.core.failure import Failure
from ding.envs.env_manager.core.groups import EnvGroups
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.results import Results
from ding.envs.env_manager.core.rows import MalformedMessage
from ding.envs.env_manager.core.sequence import ok_reply
from ding.envs.env_manager.core.spin import SPIN_LIMIT, SpinBudget
from ding.errors import EnvManagerError

logger = logging.getLogger("ding.env_manager")


class WorkerLink:
    """The channel to the workers of ``groups`` (made by ``make_channel``), and what each worker was last sent."""

    def __init__(self, make_channel: Callable[[], Channel], groups: EnvGroups) -> None:
        self._make_channel = make_channel
        self._channel: Channel | None = None
        self._groups = groups
        self.spin = SpinBudget(SPIN_LIMIT)
        """How long the caller polls for replies before it blocks (adapted to how soon they come)."""
        self._step_seq = 0
        """The number of the last step dispatched."""
        self._sent_seq = [-1] * len(groups)
        """Per worker: the number of the step it was last sent (-1: none)."""
        self.expect_ok: list[bytes] = [b""] * len(groups)
        """Per worker: its reply to the step it was last sent when it has nothing but rows to say."""
        self._late_results = 0
        self.refused_replies = 0
        """Replies refused because they did not decode (a data-only peer that sent something else)."""

    # ----- the channel ---------------------------------------------------------------------------
    def open(self) -> Channel:
        """The channel, ready to start workers (made at the first launch; closed with the link at the latest)."""
        if self._channel is None:
            self._channel = channel = self._make_channel()
            weakref.finalize(self, channel.close)
        self._channel.open(len(self._groups))
        return self._channel

    @property
    def channel(self) -> Channel:
        if self._channel is None:
            raise EnvManagerError("the workers have no channel before launch()")
        return self._channel

    @property
    def opened(self) -> Channel | None:
        """The channel, or None before the first launch."""
        return self._channel

    @property
    def late_results(self) -> int:
        """Results that arrived after their step was given up on (dropped, never delivered): those the channel
        dropped (a hung thread or a replaced zmq worker answering at last) and those the link did."""
        return self._late_results + (self._channel.late_replies if self._channel is not None else 0)

    # ----- messages ------------------------------------------------------------------------------
    def number_step(self, workers: Sequence[int]) -> int:
        """A new step number, recorded as the one ``workers`` are about to be sent."""
        self._step_seq = seq = self._step_seq + 1
        ok = ok_reply(seq)
        for w in workers:
            self._sent_seq[w] = seq
            self.expect_ok[w] = ok
        return seq

    def send(self, w: int, message: bytes) -> Failure | None:
        return self.channel.send(w, message)

    def collect(self, workers: Sequence[int], timeout: float | None, spin: bool = False) -> dict[int, Reply]:
        """One reply from each worker; a dead or silent worker yields a :class:`Failure`."""
        if not workers:
            return {}
        return self.channel.receive(workers, timeout, self.spin if spin else None)

    def poll(self, workers: Sequence[int], timeout: float | None) -> list[int]:
        """Which of ``workers`` have a reply (or died), waiting up to ``timeout`` for the first."""
        return self.channel.poll(workers, timeout)

    def handed_over(self, quick: bool) -> None:
        """``send`` has rung its workers, whose replies are ``quick``, and returns to the caller's own work (a
        channel may yield the caller's core)."""
        self.channel.handed_over(quick)

    # ----- replies -------------------------------------------------------------------------------
    def decode(self, w: int, reply: Reply | StepReply, results: Results, step: bool = True) -> StepReply | Failure:
        """A worker's step (or with ``step=False`` reset) reply as a value (see :meth:`Results.decode`).

        A failure stays one. A reply that does not decode is refused, and a step reply that answers another step
        than the one the worker was last sent is dropped as late: either becomes the failure of a broken worker.
        """
        if not isinstance(reply, bytes):
            return reply
        if step and reply == self.expect_ok[w]:  # the common case: the step sent, and nothing but rows to say
            return StepReply(seq=self._sent_seq[w])
        try:
            result = results.decode(reply, self._groups.rows[w], self.channel.codec)
        except (RefusedDataError, MalformedMessage) as err:
            return self.refuse(w, err)
        if step and result.seq != self._sent_seq[w]:
            self._late_results += 1
            message = (
                f"the worker of envs {self._groups.groups[w]} answered step {result.seq} when it was last sent step "
                f"{self._sent_seq[w]}: a late result, dropped"
            )
            logger.warning("%s; the worker is replaced", message)
            return Failure.broken(message)
        return result

    def answer(self, w: int, reply: bytes, expected: type | tuple[type, ...]) -> Any:
        """Worker ``w``'s answer to a control command: its value (of type ``expected``), or the failure it reports.

        An answer that does not decode as ``expected`` is refused, as a step reply is (:meth:`refuse`).
        """
        try:
            value = self.channel.codec.loads(reply)
        except RefusedDataError as err:
            return self.refuse(w, err)
        if not isinstance(value, (Failure, expected)):
            return self.refuse(w, RefusedDataError(f"refused an answer that is a {type(value).__name__}"))
        return value

    def refuse(self, w: int, err: Exception) -> Failure:
        """Count and log a reply of worker ``w`` that did not decode; its failure replaces the worker."""
        self.refused_replies += 1
        message = f"refused the reply of the worker of envs {self._groups.groups[w]}: {err}"
        logger.warning("%s; the worker is dropped and its envs restart", message)
        return Failure.broken(message)
