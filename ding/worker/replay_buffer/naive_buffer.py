"""DI-engine's ``NaiveReplayBuffer`` (compatibility): ding's first-in-first-out buffer with DI-engine's constructor,
``default_config()`` and calls.

``NaiveReplayBuffer(cfg, tb_logger=None, exp_name='default_experiment', instance_name='buffer')`` takes DI-engine's
config (``default_config()``: ``type``, ``replay_buffer_size``, ``deepcopy`` and ``enable_track_used_data`` at False,
the values ding has); ``NaiveReplayBuffer(replay_buffer_size, seed=0)`` is ding's own form. ``push(data,
cur_collector_envstep)``, ``sample(size, cur_learner_iter)``, ``update(info)`` (nothing to update without
priorities), ``count()``, ``start()`` and ``close()`` are DI-engine's calls; ``sample_range`` and ``replace=True``
are refused (a batch holds distinct samples drawn from the whole buffer).

Example:
    >>> buffer = NaiveReplayBuffer(NaiveReplayBuffer.default_config())
    >>> buffer.push([{'x': i} for i in range(3)], cur_collector_envstep=3)
    >>> buffer.count(), buffer.replay_buffer_size, len(buffer.sample(2, cur_learner_iter=0))
    (3, 10000, 2)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from easydict import EasyDict

from ding.config.policy_sections import REPLAY_BUFFER
from ding.utils.accepts import fixed, plain_defaults
from ding.worker import naive_replay
from ding.worker.replay_buffer.buffer_config import NO_DEEPCOPY, NO_TRACKING, buffer_config


class DIEngineBufferCalls:
    """DI-engine's calls of a replay buffer over ding's ``push`` / ``sample``."""

    config: ClassVar[dict[str, Any]]
    cfg: EasyDict

    def __init__(
        self,
        cfg: Mapping[str, Any] | int,
        tb_logger: Any = None,
        exp_name: str = "default_experiment",
        instance_name: str = "buffer",
        seed: int | None = 0,
    ) -> None:
        """DI-engine's constructor (``tb_logger`` and ``exp_name`` name DI-engine's logs; ding's buffers log
        nothing), or ding's ``(replay_buffer_size, seed=0)``."""
        self.name = instance_name
        if isinstance(cfg, Mapping):
            self.cfg = buffer_config(self.config, cfg, instance_name)
        else:
            self.cfg = EasyDict({**plain_defaults(self.config), "replay_buffer_size": cfg})
        super().__init__(*self._ding_arguments(), seed=seed)  # type: ignore[call-arg]

    def _ding_arguments(self) -> tuple[Any, ...]:
        """The positional arguments of ding's buffer, from :attr:`cfg`."""
        return (self.cfg.replay_buffer_size,)

    @classmethod
    def default_config(cls) -> EasyDict:
        """DI-engine's default config of this buffer, with the values ding has."""
        return EasyDict(plain_defaults(cls.config))

    @property
    def replay_buffer_size(self) -> int:
        return int(self.cfg.replay_buffer_size)

    def push(self, data: Mapping[str, Any] | Iterable[Any], cur_collector_envstep: int = -1) -> None:
        """Store one sample or a list (``cur_collector_envstep`` dates data for DI-engine's staleness limit, which is
        infinite here)."""
        super().push(data)  # type: ignore[misc]

    def sample(
        self, size: int, cur_learner_iter: int = -1, sample_range: slice | None = None, replace: bool = False
    ) -> list[Any] | None:
        """``size`` samples, or None while fewer are stored (``cur_learner_iter`` is DI-engine's, for staleness)."""
        if sample_range is not None or replace:
            raise ValueError(
                f"sample(sample_range={sample_range!r}, replace={replace!r}) is not supported: ding's buffers draw "
                "from the whole buffer; call sample(size, cur_learner_iter)"
            )
        return super().sample(size)  # type: ignore[misc, no-any-return]

    def count(self) -> int:
        """Samples stored now."""
        return len(self)  # type: ignore[arg-type]

    def start(self) -> None:
        """Nothing to start: ding's buffers run no monitoring threads."""

    def close(self) -> None:
        """Nothing to stop (see :meth:`start`)."""


class NaiveReplayBuffer(DIEngineBufferCalls, naive_replay.NaiveReplayBuffer):
    """ding's :class:`~ding.worker.naive_replay.NaiveReplayBuffer` with DI-engine's config and calls."""

    config: ClassVar[dict[str, Any]] = {
        "type": fixed("naive", note="DI-engine's name of this buffer"),
        "replay_buffer_size": REPLAY_BUFFER["replay_buffer_size"],
        "deepcopy": fixed(False, note=NO_DEEPCOPY),
        "enable_track_used_data": fixed(False, note=NO_TRACKING),
    }

    def update(self, info: Mapping[str, Any]) -> None:
        """Nothing to update: the samples have no priorities (DI-engine's naive buffer ignores it too)."""
