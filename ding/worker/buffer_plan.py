"""Which replay buffer the serial pipeline builds for a config, what one stored transition costs, and whether the
buffer fits in memory: all from the env's spec trace and the policy's config, before any env runs.

- ``frame_stack`` (:class:`~ding.worker.frame_buffer.FrameStackReplayBuffer`): when the env's observation is a
  frame stack (the last step of its spec trace that changes the observation is ``frame_stack`` on the whole
  observation) and the policy states an n-step rule; ``policy.other.replay_buffer.share_frames`` (None: decide
  so) forces it (True) or turns it off (False).
- ``naive`` (:class:`~ding.worker.naive_replay.NaiveReplayBuffer`): otherwise.

With ``policy.priority=True`` either kind draws by priority (:mod:`ding.worker.prioritized_buffer`:
``PrioritizedReplayBuffer``, ``PrioritizedFrameStackReplayBuffer``) with the rule of ``policy.other.replay_buffer``'s
``alpha``, ``beta`` and ``anneal_step``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError
from ding.policy.nstep import NStepRule
from ding.worker.frame_buffer import FrameStackReplayBuffer
from ding.worker.naive_replay import NaiveReplayBuffer, ReplayBuffer, check_capacity
from ding.worker.prioritized_buffer import PrioritizedFrameStackReplayBuffer, PrioritizedReplayBuffer
from ding.worker.priority import PriorityRule, priority_rule_of

SpecTrace = Sequence[tuple[str, EnvSpaces]]
FRAME_STACK, NAIVE = "frame_stack", "naive"
SIZE_KEY = "policy.other.replay_buffer.replay_buffer_size"
SHARE_KEY = "policy.other.replay_buffer.share_frames"
DEFAULT_SIZE = 10000
"""DI-engine's replay buffer size, for a policy whose config declares none."""

TRAINER_RESERVE_NBYTES = 1 << 30
"""Memory kept free for the trainer itself: Python, torch, the model, its optimizer and batches (a Pong DQN
trainer holds about 420 MB besides its replay buffer)."""
ENV_RESERVE_NBYTES = 128 << 20
"""Memory kept free per env (collector and evaluator), in its worker process or in the trainer (a forked Atari
worker holds about 33 MB; simulators that render, such as MuJoCo and dm_control, hold more)."""


@dataclasses.dataclass(frozen=True)
class ReplayPlan:
    """The replay buffer of a config: its kind, capacity and bytes per stored transition, and why that kind."""

    kind: str
    capacity: int
    transition_nbytes: int
    reason: str
    priority: PriorityRule | None = None
    """The priority rule of a prioritized buffer (``policy.priority=True``), else None."""

    @property
    def nbytes(self) -> int:
        """Bytes of the buffer at capacity."""
        return self.capacity * self.transition_nbytes

    def describe(self) -> str:
        """One line for people.

        >>> ReplayPlan('naive', 1000, 560, 'the observation is not a frame stack').describe()
        'naive replay buffer (the observation is not a frame stack): 1,000 transitions x 560 bytes = 546.9 KiB'
        >>> ReplayPlan('naive', 10, 600, 'x', PriorityRule()).describe()  # doctest: +NORMALIZE_WHITESPACE
        'prioritized naive replay buffer (x; alpha 0.6, beta 0.4, anneal_step 100000): 10 transitions x 600 bytes
        = 5.9 KiB'
        """
        if self.priority is not None:
            rule = self.priority
            return (
                f"prioritized {self.kind} replay buffer ({self.reason}; alpha {rule.alpha}, beta {rule.beta}, "
                f"anneal_step {rule.anneal_step}): {self.capacity:,} transitions x {self.transition_nbytes:,} bytes = "
                f"{human_bytes(self.nbytes)}"
            )
        return (
            f"{self.kind} replay buffer ({self.reason}): {self.capacity:,} transitions x "
            f"{self.transition_nbytes:,} bytes = {human_bytes(self.nbytes)}"
        )


def frame_stack_step(trace: SpecTrace) -> str | None:
    """The ``frame_stack`` step that makes the env's observation a frame stack, or None.

    That is the last step of the trace that changes the observation space, when it is ``frame_stack`` on the
    whole observation (a Box ``S`` becomes a Box ``(n, *S)`` of the same dtype); later steps (such as
    ``eval_episode_return``) leave the observation space as it is.

    >>> import numpy as np
    >>> from gymnasium import spaces
    >>> frame, stack = spaces.Box(0, 255, (84, 84), np.uint8), spaces.Box(0, 255, (4, 84, 84), np.uint8)
    >>> act = spaces.Discrete(6)
    >>> frame_stack_step([('env', EnvSpaces(frame, act)), ('frame_stack(n_frames=4)', EnvSpaces(stack, act)),
    ...                   ('clip_reward()', EnvSpaces(stack, act))])
    'frame_stack(n_frames=4)'
    """
    for index in range(len(trace) - 1, 0, -1):
        name, after = trace[index]
        before = trace[index - 1][1].observation
        if after.observation == before:
            continue
        stacked = after.observation
        is_stack = (
            name.split("(", 1)[0] == "frame_stack"
            and isinstance(before, spaces.Box)
            and isinstance(stacked, spaces.Box)
            and stacked.shape[1:] == before.shape
            and stacked.dtype == before.dtype
        )
        return name if is_stack else None
    return None


def plan_replay_buffer(policy_cfg: Mapping[str, Any], nstep_rule: NStepRule | None, trace: SpecTrace) -> ReplayPlan:
    """The buffer the serial pipeline builds for a policy's merged config, its n-step rule and the env's trace."""
    settings = (policy_cfg.get("other") or {}).get("replay_buffer") or {}
    size = settings.get("replay_buffer_size", DEFAULT_SIZE)
    share = settings.get("share_frames")
    if share not in (None, True, False):
        raise ConfigError(f"{SHARE_KEY} must be None (decide from the env's spec), True or False; got {share!r}")
    final = trace[-1][1]
    step = frame_stack_step(trace)
    if share is False:
        kind, reason = NAIVE, f"{SHARE_KEY}=False"
    elif step is None or nstep_rule is None:
        why = "the env's observation is not a frame stack" if step is None else "the policy states no n-step rule"
        if share:
            raise ConfigError(
                f"{SHARE_KEY}=True, but {why} (the last step that changes the observation must be frame_stack on "
                f"the whole observation; the env's last step is {trace[-1][0]!r}); set it to None or False"
            )
        kind, reason = NAIVE, why.replace("the env's observation", "the observation")
    else:
        kind, reason = FRAME_STACK, f"the observation is a frame stack: {step}"
    check_capacity(size, low=2 if kind == FRAME_STACK else 1)
    rule = priority_rule_of(policy_cfg)
    buffer_cls = _buffer_class(kind, rule is not None)
    return ReplayPlan(kind, size, buffer_cls.transition_nbytes(final), reason, rule)


def _buffer_class(kind: str, prioritized: bool) -> Any:
    if kind == FRAME_STACK:
        return PrioritizedFrameStackReplayBuffer if prioritized else FrameStackReplayBuffer
    return PrioritizedReplayBuffer if prioritized else NaiveReplayBuffer


def build_replay_buffer(
    plan: ReplayPlan, env_spaces: EnvSpaces, nstep_rule: NStepRule | None, seed: int | None
) -> ReplayBuffer:
    """The buffer ``plan`` describes."""
    if plan.kind == FRAME_STACK:
        if nstep_rule is None:
            raise ConfigError("the frame-sharing replay buffer needs the policy's n-step rule; the policy states none")
        if plan.priority is not None:
            return PrioritizedFrameStackReplayBuffer(
                plan.capacity, env_spaces.observation, nstep_rule, plan.priority, seed=seed
            )
        return FrameStackReplayBuffer(plan.capacity, env_spaces.observation, nstep_rule, seed=seed)
    if plan.priority is not None:
        return PrioritizedReplayBuffer(plan.capacity, plan.priority, seed=seed)
    return NaiveReplayBuffer(plan.capacity, seed=seed)


def check_replay_memory(plan: ReplayPlan, env_count: int, available: int) -> None:
    """Raise :class:`ConfigError` when the buffer at capacity does not fit into ``available`` bytes less the reserve
    for the trainer (:data:`TRAINER_RESERVE_NBYTES`) and ``env_count`` envs (:data:`ENV_RESERVE_NBYTES` each).

    >>> check_replay_memory(ReplayPlan('naive', 10**6, 225_000, 'x'), 12, 24 * 10**9)
    Traceback (most recent call last):
    ...
    ding.errors.ConfigError: the naive replay buffer (x) needs 209.5 GiB: 1,000,000 transitions x 225,000 bytes per \
stored transition, but 19.9 GiB are available (MemAvailable 22.4 GiB less 2.5 GiB kept for the trainer and its 12 \
envs); lower policy.other.replay_buffer.replay_buffer_size to at most 94,736
    """
    reserve = TRAINER_RESERVE_NBYTES + env_count * ENV_RESERVE_NBYTES
    usable = available - reserve
    if plan.nbytes <= usable:
        return
    fits = max(usable, 0) // plan.transition_nbytes
    raise ConfigError(
        f"the {plan.kind} replay buffer ({plan.reason}) needs {human_bytes(plan.nbytes)}: {plan.capacity:,} "
        f"transitions x {plan.transition_nbytes:,} bytes per stored transition, but "
        f"{human_bytes(max(usable, 0))} are available (MemAvailable {human_bytes(available)} less "
        f"{human_bytes(reserve)} kept for the trainer and its {env_count} envs); lower {SIZE_KEY} to at most {fits:,}"
    )


def human_bytes(count: int) -> str:
    """A byte count in binary units.

    >>> human_bytes(512), human_bytes(7146 * 10**6)
    ('512 bytes', '6.7 GiB')
    """
    value = float(count)
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")
