"""Reading a batch's results: observations, rewards and end flags from the step buffers or from replies.

With a shared-memory (or private raw-row) layout every result is in the buffers; with a pickled layout (envs
whose spaces were probed, without shared memory) observations and rewards arrive in the replies and are kept
here until read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from gymnasium import spaces

from ding.envs.env_manager.core.codec import Codec, RefusedDataError
from ding.envs.env_manager.core.replies import StepReply
from ding.envs.env_manager.core.rows import RAW_REPLY, unpack_reply
from ding.envs.env_manager.core.sequence import OK, SEQ, message_seq
from ding.envs.env_manager.core.shm import FLAG_DONE, FLAG_TERMINATED, FLAG_TRUNCATED, SharedBuffers, build_tree
from ding.envs.values.timestep import BaseEnvTimestep


class Results:
    """The step buffers of one launch and the results replies carried; reads timesteps of envs by id."""

    def __init__(self, buffers: SharedBuffers, observation_space: spaces.Space[Any], copy_on_get: bool) -> None:
        self.buffers = buffers
        self.layout = buffers.layout
        self.observation_space = observation_space
        self.copy_on_get = copy_on_get
        self.pickled_ready: dict[int, Any] = {}  # pickled layouts: each env's ready obs, last step's obs and reward
        self.pickled_final: dict[int, Any] = {}
        self.pickled_reward: dict[int, Any] = {}

    def decode(self, reply: bytes, rows: slice, codec: Codec) -> StepReply:
        """A worker's step or reset reply; raw result rows (private buffers) are copied into ``rows`` first.

        A reply that is not one (rows of the wrong length, a head ``codec`` refuses, another value) raises
        :class:`~.rows.MalformedMessage` or :class:`~.codec.RefusedDataError`.
        """
        if reply[:1] == RAW_REPLY:
            reply = unpack_reply(reply, self.buffers, rows)
        if reply[:1] == OK and len(reply) == len(OK) + SEQ.size:
            return StepReply(seq=message_seq(reply))
        result = codec.loads(reply)
        if not isinstance(result, StepReply):
            raise RefusedDataError(f"refused a step reply that is a {type(result).__name__}")
        return self.adopt(result)

    def adopt(self, result: StepReply) -> StepReply:
        """Keep the observations and rewards a reply carries (pickled layouts); call after its rows are in."""
        if result.steps:
            flags = self.buffers.flags
            for env_id, (obs, reward) in result.steps.items():
                self.pickled_reward[env_id] = reward
                (self.pickled_final if flags[env_id, FLAG_DONE] else self.pickled_ready)[env_id] = obs
        if result.ready:
            self.pickled_ready.update(result.ready)
        return result

    def obs_of(self, env_id: int, final: bool = False) -> Any:
        """Env ``env_id``'s ready observation, or with ``final`` the last one of its ended episode."""
        if self.layout.pickled:
            return (self.pickled_final if final else self.pickled_ready)[env_id]
        return self.read_obs(self.buffers.final if final else self.buffers.ready, env_id)

    def read_obs(self, target: list[np.ndarray], env_id: int) -> Any:
        copy = self.copy_on_get
        paths = self.layout.obs_paths
        if len(paths) == 1 and not paths[0]:
            row = target[0][env_id]
            return row.copy() if copy else row
        by_path = dict(zip(paths, target, strict=True))
        return build_tree(self.observation_space, lambda p: by_path[p][env_id].copy() if copy else by_path[p][env_id])

    def timestep(self, env_id: int, info: dict[str, Any]) -> BaseEnvTimestep:
        flags = self.buffers.flags[env_id]
        done = bool(flags[FLAG_DONE])
        obs = self.obs_of(env_id, final=done)
        reward = self.pickled_reward[env_id] if self.layout.pickled else self.buffers.reward[env_id].copy()
        return BaseEnvTimestep(
            obs, reward, done, info, terminated=bool(flags[FLAG_TERMINATED]), truncated=bool(flags[FLAG_TRUNCATED])
        )

    def timesteps(self, env_ids: list[int], infos: Mapping[int, dict[str, Any]]) -> dict[int, BaseEnvTimestep]:
        """Timesteps of several envs read with one copy per buffer (the per-step hot path)."""
        buffers, layout = self.buffers, self.layout
        if layout.pickled or len(layout.obs_paths) != 1 or layout.obs_paths[0]:
            return {env_id: self.timestep(env_id, infos.get(env_id, {})) for env_id in env_ids}
        flags = buffers.flags[env_ids].tolist()
        rewards = buffers.reward[env_ids]
        ready = buffers.ready[0][env_ids]
        final = buffers.final[0][env_ids] if any(row[FLAG_DONE] for row in flags) else ready
        out = {}
        for j, env_id in enumerate(env_ids):
            done, terminated, truncated, _ = flags[j]
            obs = final[j] if done else ready[j]
            out[env_id] = BaseEnvTimestep(
                obs, rewards[j], done, infos.get(env_id, {}), terminated=terminated, truncated=truncated
            )
        return out
