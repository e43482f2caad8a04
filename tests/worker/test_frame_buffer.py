"""FrameStackReplayBuffer on hand-made frame stacks: episode boundaries, n-step fields, FIFO wrap-around, sampling,
errors, and the bytes it allocates per transition."""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.envs.values.spaces import EnvSpaces
from ding.errors import ConfigError
from ding.policy.nstep import NStepRule, nstep_samples
from ding.worker.frame_buffer import FrameStackReplayBuffer, unbatch

N = 3  # frames per stack
FRAME = (2, 2)


class Episodes:
    """Transitions of frame stacks as ``frame_stack`` makes them; frame ``f`` is filled with the value ``f``."""

    def __init__(self, n_frames: int = N, dtype: Any = np.uint8) -> None:
        self.n_frames, self.dtype = n_frames, dtype
        self.next_frame = 1
        self.stacks: dict[int, list[int]] = {}

    def frame(self, value: int) -> np.ndarray:
        return np.full(FRAME, value, self.dtype)

    def stack(self, values: list[int]) -> np.ndarray:
        return np.stack([self.frame(v) for v in values])

    def step(self, env_id: int = 0, reward: float = 1.0, done: bool = False, end: bool | None = None) -> dict[str, Any]:
        start = env_id not in self.stacks
        if start:
            self.stacks[env_id] = [self.next_frame] * self.n_frames
            self.next_frame += 1
        before = self.stacks[env_id]
        after = [*before[1:], self.next_frame]
        self.next_frame += 1
        end = done if end is None else end
        self.stacks[env_id] = after
        if end:
            del self.stacks[env_id]
        return {
            "env_id": env_id,
            "episode_start": start,
            "episode_end": end,
            "obs": self.stack(before),
            "action": after[-1] % 7,
            "reward": reward,
            "next_obs": self.stack(after),
            "done": done,
        }


def space(n_frames: int = N, dtype: Any = np.uint8) -> spaces.Box:
    return spaces.Box(0, 255, (n_frames, *FRAME), dtype)


def frames_of(stacks: np.ndarray) -> list[list[int]]:
    """The value of each frame of each stack in a batch."""
    return stacks[..., 0, 0].astype(int).tolist()


def test_a_reset_stack_repeats_the_reset_frame_and_windows_end_with_the_episode() -> None:
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(50, space(), NStepRule(nstep=3, gamma=0.5))
    # episode 1: frames 1 (reset), 2, 3, 4 (terminated); episode 2: frames 5 (reset), 6, 7 (cut by a time limit)
    transitions = [episodes.step(reward=1.0), episodes.step(reward=2.0), episodes.step(reward=4.0, done=True)]
    transitions += [episodes.step(reward=8.0), episodes.step(reward=16.0, end=True)]
    buffer.push(transitions)
    assert buffer.ready_transitions().tolist() == [0, 1, 2, 3, 4] and len(buffer) == 5
    batch = buffer.gather(range(5))
    assert frames_of(batch["obs"]) == [[1, 1, 1], [1, 1, 2], [1, 2, 3], [5, 5, 5], [5, 5, 6]]
    assert frames_of(batch["next_obs"]) == [[2, 3, 4], [2, 3, 4], [2, 3, 4], [5, 6, 7], [5, 6, 7]]
    assert batch["reward"].tolist() == [1 + 2 * 0.5 + 4 * 0.25, 2 + 4 * 0.5, 4.0, 8 + 16 * 0.5, 16.0]
    assert batch["discount"].tolist() == [0.125, 0.25, 0.5, 0.25, 0.5]
    assert batch["done"].tolist() == [True, True, True, False, False]  # a time-limit cut is no end: bootstrapped
    assert batch["action"].tolist() == [t["action"] for t in transitions]
    assert batch["obs"].dtype == np.uint8 and batch["obs"].shape == (5, N, *FRAME)
    reference = nstep_samples(transitions[:3], 3, 0.5, True) + nstep_samples(transitions[3:], 3, 0.5, True)
    for got, want in zip(unbatch(batch), reference, strict=True):
        assert got.keys() == want.keys()
        for key in ("action", "reward", "done", "discount"):
            assert got[key] == want[key] and type(got[key]) is type(want[key])
        np.testing.assert_array_equal(got["obs"], want["obs"])
        np.testing.assert_array_equal(got["next_obs"], want["next_obs"])


def test_a_window_waits_for_its_last_transition_and_envs_interleave() -> None:
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(50, space(), NStepRule(nstep=2, gamma=0.5))
    buffer.push([episodes.step(0), episodes.step(1), episodes.step(0)])
    assert buffer.ready_transitions().tolist() == [0]  # env 1's first transition waits for its second
    assert buffer.sample(2) is None and buffer.sample_count == 1
    buffer.push([episodes.step(1, reward=3.0), episodes.step(0, done=True)])
    assert buffer.ready_transitions().tolist() == [0, 1, 2, 4]
    batch = buffer.gather([1, 2])
    assert frames_of(batch["obs"]) == [[3, 3, 3], [1, 1, 2]]  # env 1's reset frame is frame 3
    assert frames_of(batch["next_obs"]) == [[3, 4, 6], [2, 5, 7]] and batch["reward"].tolist() == [2.5, 1.5]


def test_eviction_is_fifo_and_a_sample_never_mixes_overwritten_frames() -> None:
    episodes = Episodes(dtype=np.float32)
    capacity = 10
    buffer = FrameStackReplayBuffer(capacity, space(dtype=np.float32), NStepRule(nstep=1, gamma=0.9))
    buffer.push([episodes.step() for _ in range(30)])  # one long episode: slot 0 is its reset frame
    assert len(buffer) == capacity and buffer.pushed_count == 30
    # slots hold transitions 20..29 (frames 22..31); the obs of the oldest N of them begin with evicted frames
    assert buffer.ready_transitions().tolist() == list(range(20 + N, 30))
    batch = buffer.gather(range(20 + N, 30))
    assert frames_of(batch["obs"])[0] == [22, 23, 24] and frames_of(batch["next_obs"])[-1] == [29, 30, 31]
    with pytest.raises(ValueError, match=r"transitions \[20\] are not drawable now"):
        buffer.gather([20])
    buffer.push(episodes.step(done=True))  # evicts transition 20, whose frame begins transition 23's obs
    assert buffer.ready_transitions().tolist() == list(range(24, 31))


def test_a_reset_slot_counts_against_the_capacity_and_windows_over_evicted_frames_never_open() -> None:
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(4, space(), NStepRule(nstep=3, gamma=0.9))
    buffer.push([episodes.step(done=True), episodes.step(0), episodes.step(1), episodes.step(0)])
    # slots 0-6: reset, t0 | reset, t1 | reset, t2 | t3; kept: t1, env 1's reset, t2, t3
    assert len(buffer) == 3 and buffer.sample_count == 0
    buffer.push(episodes.step(0, done=True))  # opens the windows of t1, t3, t4: t1 is gone, t3 and t4 start
    assert len(buffer) == 3 and buffer.sample_count == 0  # with env 0's reset frame, which is gone too


def test_sampling_is_uniform_distinct_and_seeded() -> None:
    def draws(seed: int) -> list[int]:
        episodes = Episodes()
        buffer = FrameStackReplayBuffer(100, space(), NStepRule(nstep=1, gamma=0.9), seed=seed)
        buffer.push([episodes.step(done=i % 4 == 3) for i in range(12)])
        out = []
        for _ in range(2000):
            samples = buffer.sample(3)
            assert samples is not None
            out += [int(s["next_obs"][-1, 0, 0]) for s in samples]
            assert len(set(out[-3:])) == 3
        return out

    first = draws(1)
    assert first == draws(1) and first != draws(2)
    counts = collections.Counter(first)
    assert len(counts) == 12 and all(400 < n < 600 for n in counts.values())


def test_sample_batch_keeps_the_dtype_and_samples_are_plain_values() -> None:
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(20, space(), NStepRule(nstep=2, gamma=0.9), seed=0)
    buffer.push([episodes.step(done=i == 5) for i in range(6)])
    batch = buffer.sample_batch(4)
    assert batch is not None and batch["obs"].dtype == batch["next_obs"].dtype == np.uint8
    assert {key: value.shape for key, value in batch.items()} == {
        "obs": (4, N, *FRAME), "action": (4,), "reward": (4,), "next_obs": (4, N, *FRAME), "done": (4,),
        "discount": (4,),
    }  # fmt: skip
    samples = buffer.sample(2)
    assert samples is not None
    assert [type(samples[0][key]) for key in ("action", "reward", "done", "discount")] == [int, float, bool, float]
    buffer.clear()
    assert len(buffer) == buffer.sample_count == buffer.pushed_count == 0 and buffer.sample(1) is None


def test_vector_actions_are_kept_per_sample() -> None:
    episodes = Episodes()
    buffer = FrameStackReplayBuffer(20, space(), NStepRule(nstep=1, gamma=0.9))
    transitions = [episodes.step(done=i == 2) for i in range(3)]
    for i, transition in enumerate(transitions):
        transition["action"] = np.array([i, -i], np.float32)
    buffer.push(transitions)
    samples = unbatch(buffer.gather([0, 1, 2]))
    assert [s["action"].tolist() for s in samples] == [[0, 0], [1, -1], [2, -2]]
    assert samples[0]["action"].dtype == np.float32


def test_observations_that_are_no_frame_stacks_are_refused() -> None:
    rule = NStepRule(nstep=1, gamma=0.9)
    episodes = Episodes()
    first = episodes.step()
    buffer = FrameStackReplayBuffer(10, space(), rule)
    with pytest.raises(ValueError, match=r"env 0: an episode's first obs must repeat its reset frame .*share_frames"):
        buffer.push({**first, "obs": episodes.stack([1, 2, 3])})
    with pytest.raises(ValueError, match=r"env 0: next_obs is not obs shifted by one frame"):
        buffer.push({**first, "next_obs": episodes.stack([9, 9, 8])})
    buffer = FrameStackReplayBuffer(10, space(), rule)
    buffer.push(first)
    with pytest.raises(ValueError, match=r"obs differs from the next_obs of the env's previous transition"):
        buffer.push({**episodes.step(), "obs": episodes.stack([1, 1, 1])})
    with pytest.raises(
        TypeError, match=r"env 0: obs is \(3, 2, 2\) float32, but the observation space is \(3, 2, 2\) "
    ):
        buffer.push({**first, "obs": first["obs"].astype(np.float32)})
    with pytest.raises(TypeError, match=r"env 0: next_obs is \(2, 2\) uint8"):
        buffer.push({**first, "next_obs": first["next_obs"][0]})


def test_bad_arguments() -> None:
    rule = NStepRule(nstep=1, gamma=0.9)
    with pytest.raises(ConfigError, match=r"replay_buffer_size must be an int >= 2, got 1"):
        FrameStackReplayBuffer(1, space(), rule)
    with pytest.raises(TypeError, match=r"needs a frame-stack observation, a Box of shape \(n_frames, \*frame\); got "):
        FrameStackReplayBuffer(10, spaces.Box(0, 1, (4,)), rule)
    with pytest.raises(TypeError, match=r"got Discrete\(3\)"):
        FrameStackReplayBuffer(10, spaces.Discrete(3), rule)
    buffer = FrameStackReplayBuffer(10, space(), rule)
    with pytest.raises(ValueError, match=r"sample size must be an int >= 1, got 0"):
        buffer.sample(0)
    with pytest.raises(ValueError, match=r"sample size 11 exceeds the buffer's capacity 10"):
        buffer.sample_batch(11)


def rss_bytes() -> int:
    with open("/proc/self/statm") as file:
        return int(file.read().split()[1]) * 4096


def test_pong_frames_take_under_8_kib_per_transition_at_capacity() -> None:
    capacity = 20_000
    pong = spaces.Box(0, 255, (4, 84, 84), np.uint8)
    per_transition = FrameStackReplayBuffer.transition_nbytes(EnvSpaces(pong, spaces.Discrete(6)))
    assert per_transition == 84 * 84 + 5 * 8 + 8 + 8 + 8 + 8 + 2 + 8 + 8 == 7146
    rng = np.random.default_rng(0)
    frames = rng.integers(0, 256, (1000, 84, 84), dtype=np.uint8)

    def transitions() -> Any:
        stack = np.stack([frames[0]] * 4)
        for t in range(capacity + 100):
            next_stack = np.concatenate([stack[1:], frames[(t + 1) % len(frames)][None]])
            yield {
                "env_id": 0, "episode_start": t == 0, "episode_end": False, "obs": stack, "action": t % 6,
                "reward": 0.0, "next_obs": next_stack, "done": False,
            }  # fmt: skip
            stack = next_stack

    before = rss_bytes()
    buffer = FrameStackReplayBuffer(capacity, pong, NStepRule(nstep=3, gamma=0.99))
    buffer.push(transitions())
    grown = rss_bytes() - before
    assert len(buffer) == capacity and buffer.nbytes == capacity * per_transition
    assert buffer.nbytes / capacity <= 8 * 1024
    assert 0.9 * buffer.nbytes < grown < 1.1 * buffer.nbytes + 16 * 2**20  # what it holds is what it costs
