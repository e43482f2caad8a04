"""A config's wrapper chain around a user's own env runs the same in every manager kind.

The env constructors are the ones ``get_vec_env_setting`` gives for a compiled config: ``ChainedEnv`` around an env
that declares its spaces (a manager knows them from the constructor, and lays them out in shared memory) and around
one written DI-engine's way (its spaces are read from the built env). Each env ends its episode at the chain's time
limit with frame-stacked observations of the predicted space.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pytest
from gymnasium import spaces

from ding.config import compile_config
from ding.envs import ChainedEnv, get_vec_env_setting
from tests.envs import chain_envs
from tests.envs.env_manager.conftest import MakeManager

LIMIT = 7
CHAIN = [("time_limit", {"max_episode_steps": LIMIT}), ("frame_stack", {"n_frames": 2})]
STACKED = spaces.Box(0.0, 1000.0, (2, 3), np.float32)


def chained_fns(env_type: str, env_num: int = 2) -> list[Any]:
    main = {"env": {"env_wrapper": CHAIN, "collector_env_num": env_num}}
    create = {"env": {"type": env_type, "import_names": [chain_envs.__name__]}, "policy": {"type": "dqn"}}
    cfg = compile_config(main, create)
    env_fn, collector_cfgs, _ = get_vec_env_setting(cfg.env, eval_=False)
    assert issubclass(env_fn, ChainedEnv) and collector_cfgs is not None
    return [functools.partial(env_fn, cfg=c) for c in collector_cfgs]


def run_one_episode_each(manager: Any) -> None:
    assert (manager.observation_space, manager.reward_space.shape) == (STACKED, (1,))
    manager.seed(0)
    manager.launch()
    steps = dict.fromkeys(range(manager.env_num), 0)
    ended: dict[int, Any] = {}
    while len(ended) < manager.env_num:
        ready = [i for i in manager.ready_obs_id if i not in ended]
        stepped = manager.step({i: np.array([1]) for i in ready})
        if isinstance(stepped, list):  # a V2 manager: a list of timesteps that carry their env ids
            stepped = {int(timestep.env_id): timestep for timestep in stepped}
        for env_id, timestep in stepped.items():
            steps[env_id] += 1
            assert timestep.obs.shape == (2, 3) and STACKED.contains(np.asarray(timestep.obs, np.float32))
            assert np.asarray(timestep.reward).shape == (1,)
            if timestep.done:
                ended[env_id] = timestep
    assert steps == dict.fromkeys(range(manager.env_num), LIMIT)
    for timestep in ended.values():
        assert timestep.truncated and float(np.asarray(timestep.info["eval_episode_return"])[0]) == LIMIT
        assert timestep.obs[:, 0].tolist() == [LIMIT - 1, LIMIT]


@pytest.mark.parametrize("env_type", ["chain_counting", "chain_property_counting"])
def test_the_chain_runs_in_every_manager_kind(env_type: str, manager_kind: str, new_manager: MakeManager) -> None:
    run_one_episode_each(new_manager(manager_kind, chained_fns(env_type)))


@pytest.mark.parametrize(
    "kind_cfg",
    [
        {"type": "subprocess_v2"},
        {"type": "subprocess", "context": "spawn"},
        {"type": "subprocess", "context": "forkserver"},
    ],
    ids=["subprocess_v2", "spawn", "forkserver"],
)
def test_the_chain_runs_in_other_managers_and_start_methods(kind_cfg: dict[str, Any], new_manager: MakeManager) -> None:
    from ding.envs.env_manager import create_env_manager

    manager = create_env_manager(kind_cfg, chained_fns("chain_counting"))
    try:
        run_one_episode_each(manager)
    finally:
        manager.close()
