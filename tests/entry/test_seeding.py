"""A run's env managers are seeded per role and env from the run's seed, and eval replays the run's evaluations."""

from __future__ import annotations

import copy
from typing import Any

from ding.config import read_config
from ding.entry.utils import compile_for_run, create_env_managers, seed_env_managers
from ding.envs.values.seeding import role_seeds
from tests.entry.test_cli import CARTPOLE


def managers(seed: int) -> tuple[Any, Any, Any]:
    main, create = read_config(CARTPOLE)
    main = copy.deepcopy(dict(main))
    main["env"]["collector_env_num"], main["env"]["evaluator_env_num"] = 3, 2
    cfg, _ = compile_for_run(main, dict(create), seed, None)
    collector, evaluator = create_env_managers(cfg)
    return cfg, collector, evaluator


def test_collector_and_evaluator_envs_get_their_own_seeds() -> None:
    cfg, collector, evaluator = managers(0)
    try:
        seed_env_managers(0, cfg, collector, evaluator)
        collector.launch()
        evaluator.launch()
        expected = role_seeds(0, {"collector": 3, "evaluator": 2})
        assert collector._seed == expected["collector"] and evaluator._seed == expected["evaluator"]
        first_eval = evaluator.ready_obs
        evaluator.close()
        seed_env_managers(0, cfg, None, evaluator)  # what eval_checkpoint does: the same starts again
        evaluator.launch()
        again = evaluator.ready_obs
        assert all((first_eval[i] == again[i]).all() for i in range(2))
    finally:
        collector.close()
        evaluator.close()
