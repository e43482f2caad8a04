"""Shape-proof cases for the task tools: ``task_id`` and ``curriculum`` on multitask envs, ``profiler`` anywhere.

The multitask envs join the catalogue here (as the ALE entries do in :mod:`.catalogue`): two catalogue envs of
different observation lengths (padded) or of one Dict observation, with episodes of different lengths.
"""

from __future__ import annotations

import numpy as np
from gymnasium import spaces

from ding.envs.env_wrappers import MultitaskEnv
from tests.envs.env_wrappers.catalogue import CATALOGUE, CatalogueEntry, CatalogueEnv, ShapeCase


def _vector_tasks() -> MultitaskEnv:
    long = CatalogueEnv(spaces.Box(-10, 10, (5,), np.float32), spaces.Discrete(3))
    short = CatalogueEnv(spaces.Box(0, 3, (3,), np.float32), spaces.Discrete(3), episode_len=7)
    return MultitaskEnv([long, short], ["long", "short"], pad_observation=True)


def _dict_tasks() -> MultitaskEnv:
    obs = spaces.Dict({"pos": spaces.Box(-1, 1, (2,), np.float32), "image": spaces.Box(0, 255, (8, 8), np.uint8)})
    return MultitaskEnv([CatalogueEnv(obs, spaces.Discrete(2), episode_len=n) for n in (4, 6, 9)])


MULTITASK_CATALOGUE = {
    "multitask_vector": CatalogueEntry(_vector_tasks, "two tasks, (5,) and (3,) float32 padded to (5,), Discrete(3)"),
    "multitask_dict": CatalogueEntry(_dict_tasks, "three tasks of one Dict observation, Discrete(2)"),
}
CATALOGUE.update(MULTITASK_CATALOGUE)

CASES = [
    *(ShapeCase("task_id", "multitask_vector", {"num_tasks": 2, "encoding": e}) for e in ("one_hot", "index", "dict")),
    ShapeCase("task_id", "multitask_dict", {"num_tasks": 3, "encoding": "dict"}),
    ShapeCase("task_id", "multitask_dict", {"num_tasks": 3, "encoding": "dict", "key": "task"}),
    ShapeCase("curriculum", "multitask_vector"),
    ShapeCase("curriculum", "multitask_dict", {"progress_favor": 3.0, "warmup_period": 0}),
    *(ShapeCase("profiler", env, {"log_at_close": False}) for env in ("vector", "image_hwc", "dict_obs")),
    ShapeCase("profiler", "vector_reward"),
    ShapeCase("profiler", "multitask_vector", {"log_at_close": False}),
]
