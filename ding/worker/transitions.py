"""A collect mode whose samples are the policy's transitions, one per env step, tagged with their env and episode.

A replay buffer that builds its samples itself (:class:`~ding.worker.frame_buffer.FrameStackReplayBuffer`) needs
each env's transitions in order and where episodes begin and end. :func:`transition_collect_mode` wraps a policy's
collect mode so that :class:`~ding.worker.SampleSerialCollector` returns exactly that: every transition the
policy's ``process_transition`` makes, at once (no n-step window is held back), with three more keys:

- ``env_id``: the env it comes from;
- ``episode_start``: the first transition of an episode. That is an env's first transition, the one after an
  episode's end, and the one after a step the collector dropped as *abnormal* (the env failed and was reset:
  the episode it cut never ends, as the collector discards it);
- ``episode_end``: the episode ended here (terminated or truncated).

Example:
    >>> from functools import partial
    >>> from ding.envs.env_manager import create_env_manager
    >>> from ding.policy.dqn import DQNPolicy
    >>> from ding.worker import SampleSerialCollector
    >>> from dizoo.classic_control.cartpole.envs import CartPoleEnv
    >>> env = create_env_manager({'type': 'base'}, [partial(CartPoleEnv, cfg={}) for _ in range(2)])
    >>> env.seed(0)
    >>> policy = DQNPolicy({'model': {'obs_shape': 4, 'action_shape': 2}, 'nstep': 3})
    >>> collector = SampleSerialCollector(env, transition_collect_mode(policy.collect_mode))
    >>> transitions = collector.collect(n_sample=4)
    >>> [(t['env_id'], t['episode_start'], t['episode_end']) for t in transitions]
    [(0, True, False), (1, True, False), (0, False, False), (1, False, False)]
    >>> collector.close()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from ding.policy.base import CollectMode

ENV_ID = "env_id"
EPISODE_START = "episode_start"
EPISODE_END = "episode_end"


class _EpisodeTracker:
    """Which envs have an episode under way, and which are waiting for the result of an action."""

    def __init__(self, mode: CollectMode) -> None:
        self._mode = mode
        self._acting: set[Any] = set()  # acted on, no transition yet
        self._running: set[Any] = set()  # an episode under way

    def forward(self, obs: Mapping[Any, Any], **kwargs: Any) -> dict[Any, dict[str, Any]]:
        outputs = self._mode.forward(obs, **kwargs)
        for env_id in obs:
            if env_id in self._acting:  # its last step never became a transition: the collector dropped it
                self._running.discard(env_id)
            self._acting.add(env_id)
        return {env_id: {**output, ENV_ID: env_id} for env_id, output in outputs.items()}

    def process_transition(self, obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        env_id = output[ENV_ID]
        self._acting.discard(env_id)
        transition = dict(self._mode.process_transition(obs, output, timestep))
        transition[ENV_ID] = env_id
        transition[EPISODE_START] = env_id not in self._running
        transition[EPISODE_END] = bool(timestep.done)
        if timestep.done:
            self._running.discard(env_id)
        else:
            self._running.add(env_id)
        return transition


def _every_transition(traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
    return list(traj)


def transition_collect_mode(mode: CollectMode) -> CollectMode:
    """``mode`` with its transitions as the samples, tagged as the module describes."""
    tracker = _EpisodeTracker(mode)
    return dataclasses.replace(
        mode,
        forward=tracker.forward,
        process_transition=tracker.process_transition,
        get_train_sample=_every_transition,
    )
