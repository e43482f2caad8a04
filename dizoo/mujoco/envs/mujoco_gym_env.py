"""DI-engine's truncated-observation MuJoCo ids, registered with gymnasium on its v5 envs.

Importing this module registers ``AntTruncatedObs-v2`` (Ant without the contact forces: 27 observations) and
``HumanoidTruncatedObs-v2`` (Humanoid with joint positions and velocities only: 45 observations), the
observations model-based methods such as MBPO use. DI-engine built them on gym's mujoco-py ``-v2`` envs; here
they are gymnasium's ``Ant-v5`` and ``Humanoid-v5`` with the observation options that leave out the same
entries (the ids keep DI-engine's names; the physics is v5's). They are plain gymnasium ids, for ``gym.make``
or ``DingEnvWrapper(cfg={'env_id': ...})``, not ``MujocoEnv`` ids.

Example:
    >>> import gymnasium as gym
    >>> gym.make('AntTruncatedObs-v2').observation_space.shape
    (27,)
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym

from dizoo.mujoco.gl import use_headless_gl

use_headless_gl()

TRUNCATED_OBS_ENVS: dict[str, tuple[str, dict[str, Any]]] = {
    "AntTruncatedObs-v2": ("gymnasium.envs.mujoco.ant_v5:AntEnv", {"include_cfrc_ext_in_observation": False}),
    "HumanoidTruncatedObs-v2": (
        "gymnasium.envs.mujoco.humanoid_v5:HumanoidEnv",
        {
            "include_cinert_in_observation": False,
            "include_cvel_in_observation": False,
            "include_qfrc_actuator_in_observation": False,
            "include_cfrc_ext_in_observation": False,
        },
    ),
}
"""id -> (gymnasium entry point, keyword arguments) of each registered env; 1000 steps per episode."""


def register_truncated_obs_envs() -> None:
    """Register the ids of :data:`TRUNCATED_OBS_ENVS` with gymnasium (again is harmless)."""
    for env_id, (entry_point, kwargs) in TRUNCATED_OBS_ENVS.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point, max_episode_steps=1000, kwargs=kwargs)


register_truncated_obs_envs()
