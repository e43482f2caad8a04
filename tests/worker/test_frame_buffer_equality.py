"""FrameStackReplayBuffer against today's path: the same transitions give bit-for-bit the same samples.

Two runs of the real collector over the same envs (same seeds, actions a pure function of the observation) see the
same transitions. Today's path: the policy's collect mode makes n-step samples (``nstep_samples``) that go into a
``NaiveReplayBuffer``. The new path: ``transition_collect_mode`` hands every transition to a small
``FrameStackReplayBuffer``. After every push the drawable transitions of the new buffer must be exactly those whose
sample today's path had made by then and whose frames are still stored (a reference model of the slots decides
which), and each rebuilt sample must equal today's bit for bit.

Frames keep the dtype the env's observation space declares (the buffer refuses any other): the ``uint8`` cases
store uint8 frames wherever the env's spaces keep them uint8.
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pytest

from ding.envs.env_manager import create_env_manager
from ding.policy.base import CollectMode
from ding.policy.dqn import DQNPolicy
from ding.worker import NaiveReplayBuffer, SampleSerialCollector
from ding.worker.frame_buffer import FrameStackReplayBuffer, unbatch
from ding.worker.transitions import ENV_ID, EPISODE_END, EPISODE_START, transition_collect_mode
from dizoo.atari.envs import AtariEnv
from tests.worker.frame_envs import frames_env

SAMPLE_KEYS = ("obs", "action", "reward", "next_obs", "done", "discount")
Who = tuple[int, int]  # (env id, the env's k-th transition)


def scripted(n_actions: int) -> Callable[..., dict[int, dict[str, Any]]]:
    """Actions that depend only on the observation, so two runs see the same transitions."""

    def forward(obs: Mapping[int, Any], **kwargs: Any) -> dict[int, dict[str, Any]]:
        return {
            env_id: {"action": int(np.ascontiguousarray(o).view(np.uint8).sum() + env_id) % n_actions}
            for env_id, o in obs.items()
        }

    return forward


def tagged_mode(mode: CollectMode, n_actions: int) -> CollectMode:
    """Today's collect mode with scripted actions; each sample is tagged with its transition (``who``) and with
    the transition whose arrival made it (``trigger``)."""
    act = scripted(n_actions)
    counts: collections.Counter[int] = collections.Counter()

    def forward(obs: Mapping[int, Any], **kwargs: Any) -> dict[int, dict[str, Any]]:
        return {env_id: {**out, "env": env_id} for env_id, out in act(obs).items()}

    def process_transition(obs: Any, output: Mapping[str, Any], timestep: Any) -> dict[str, Any]:
        transition = mode.process_transition(obs, output, timestep)
        env_id = output["env"]
        transition["who"] = (env_id, counts[env_id])
        counts[env_id] += 1
        return transition

    def get_train_sample(traj: list[dict[str, Any]], episode_over: bool) -> list[dict[str, Any]]:
        samples = mode.get_train_sample(traj, episode_over)
        for sample, transition in zip(samples, traj, strict=False):
            sample["who"], sample["trigger"] = transition["who"], traj[-1]["who"]
        return samples

    return dataclasses.replace(
        mode, forward=forward, process_transition=process_transition, get_train_sample=get_train_sample
    )


def run(env_fns: list[Any], mode: CollectMode, env_steps: int, push: Callable[[list[dict[str, Any]]], None]) -> None:
    manager = create_env_manager({"type": "base"}, env_fns)
    manager.seed(0)
    collector = SampleSerialCollector(manager, mode)
    try:
        while collector.env_step < env_steps:
            push(collector.collect(n_sample=1))
    finally:
        collector.close()


class SlotModel:
    """Which transitions still have all their frames: one slot per transition and per episode's reset frame."""

    def __init__(self, capacity: int, n_frames: int) -> None:
        self.capacity, self.n_frames = capacity, n_frames
        self.slots = 0
        self.cuts = 0
        self.episodes: dict[int, list[int]] = {}
        self.base: list[int] = []  # per transition: the slot of the oldest frame of its obs

    def push(self, transition: Mapping[str, Any]) -> None:
        env_id = transition[ENV_ID]
        if transition[EPISODE_START] and env_id in self.episodes:
            self.cuts += 1  # the collector dropped an abnormal step: that episode never ends
        if transition[EPISODE_START] or env_id not in self.episodes:
            self.episodes[env_id] = [self.slots]
            self.slots += 1
        episode = self.episodes[env_id]
        episode.append(self.slots)
        self.slots += 1
        self.base.append(episode[max(len(episode) - 1 - self.n_frames, 0)])
        if transition[EPISODE_END]:
            del self.episodes[env_id]

    def stored(self, number: int) -> bool:
        return self.base[number] >= self.slots - self.capacity


def same_bits(got: Any, want: Any) -> bool:
    a, b = np.asarray(got), np.asarray(want)
    return type(got) is type(want) and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def check_against_today(
    env_fns: list[Any], n_actions: int, nstep: int, capacity: int, env_steps: int
) -> tuple[FrameStackReplayBuffer, list[list[int]]]:
    """Run both paths and compare after every push; return the new buffer and its drawable transitions after
    each push."""
    policy = DQNPolicy({"model": {"obs_shape": 4, "action_shape": n_actions}, "nstep": nstep, "discount_factor": 0.9})
    today = NaiveReplayBuffer(10**6)
    run(env_fns, tagged_mode(policy.collect_mode, n_actions), env_steps + 50, today.push)
    drawn = today.sample(len(today))
    assert drawn is not None
    expected = {sample["who"]: sample for sample in drawn}

    obs_space = env_fns[0]().observation_space
    assert policy.nstep_rule is not None
    buffer = FrameStackReplayBuffer(capacity, obs_space, policy.nstep_rule, seed=0)
    model = SlotModel(capacity, obs_space.shape[0])
    whos: list[Who] = []
    counts: collections.Counter[int] = collections.Counter()
    history: list[list[int]] = []

    def push(transitions: list[dict[str, Any]]) -> None:
        for transition in transitions:
            whos.append((transition[ENV_ID], counts[transition[ENV_ID]]))
            counts[transition[ENV_ID]] += 1
            model.push(transition)
        buffer.push(transitions)
        pushed = set(whos)
        want = [n for n, who in enumerate(whos) if who in expected and expected[who]["trigger"] in pushed]
        want = [n for n in want if model.stored(n)]
        assert buffer.ready_transitions().tolist() == want
        assert buffer.sample_count == len(want) and len(buffer) <= capacity
        for number, sample in zip(want, unbatch(buffer.gather(want)), strict=True):
            reference = expected[whos[number]]
            for key in SAMPLE_KEYS:
                assert same_bits(sample[key], reference[key]), (number, whos[number], key)
        history.append(want)

    run(env_fns, transition_collect_mode(dataclasses.replace(policy.collect_mode, forward=scripted(n_actions))),
        env_steps, push)  # fmt: skip
    assert model.cuts == sum(1 for fn in env_fns if fn.keywords["cfg"].get("env_kwargs", {}).get("fail_at"))
    return buffer, history


def assert_fifo(history: list[list[int]], capacity: int, pushed: int) -> None:
    """A transition leaves the drawable set for good, and only once newer slots took the place of its data."""
    gone: set[int] = set()
    for before, after in itertools.pairwise(history):
        assert not gone & set(after)
        gone |= set(before) - set(after)
    if pushed > capacity:
        assert gone and max(gone) < pushed - capacity // 2
    else:
        assert not gone


@pytest.mark.parametrize("dtype", ["uint8", "float32"])
@pytest.mark.parametrize("nstep", [1, 3])
@pytest.mark.parametrize(("n_frames", "capacity"), [(4, 13), (2, 40), (4, 400)])
def test_synthetic_envs_short_episodes_several_envs(dtype: str, nstep: int, n_frames: int, capacity: int) -> None:
    # three envs, episodes of 1-6 steps (terminated or cut by the time limit), env 1 fails at its 20th step, in
    # the middle of an episode whatever the seeds (its episodes are all cut at 6 steps: 20 is the 4th's second)
    env_fns = [
        frames_env(n_frames, dtype=dtype),
        frames_env(n_frames, dtype=dtype, fail_at=20, p_end=0.0),
        frames_env(n_frames, dtype=dtype, frame_shape=(3, 4), p_end=0.4),
    ]
    buffer, history = check_against_today(env_fns, 3, nstep, capacity, env_steps=240)
    assert len(history) >= 80 and buffer.pushed_count >= 240
    assert sum(1 for ready in history if ready) > len(history) // 2
    assert_fifo(history, capacity, buffer.pushed_count)
    assert len(buffer) == min(buffer.pushed_count, len(buffer)) <= capacity


def test_real_pong_frames_across_episode_boundaries_and_wrap_around() -> None:
    # the atari_default chain, games cut after 40 steps so that episodes end; 2 envs, 3-step returns
    env_fns = [partial(AtariEnv, cfg={"env_id": "ALE/Pong-v5", "max_episode_steps": 40}) for _ in range(2)]
    buffer, history = check_against_today(env_fns, 6, nstep=3, capacity=70, env_steps=200)
    assert len(history) >= 100 and buffer.pushed_count >= 200 and len(buffer) < 70
    assert_fifo(history, 70, buffer.pushed_count)
