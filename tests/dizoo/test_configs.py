"""For every dizoo config: ``ding -m spec`` works, and its prediction equals real observations of that config's env.

CARLA configs need a CARLA server to build their env; ``tests/dizoo/test_carla.py`` proves their prediction
against the observations the env assembles from sensor readings instead.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import pytest

from ding.config import compile_config, read_config
from ding.entry.cli import main
from ding.entry.spec import describe_space, spec_trace_from_config
from ding.envs.from_config import env_class
from tests.envs.env_wrappers.test_shape_proof import assert_matches_space

ROOT = pathlib.Path(__file__).resolve().parents[2]
ALL_CONFIGS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "dizoo").glob("**/config/*_config.py"))
NEEDS_SERVER = ("dizoo/carla/",)
CONFIGS = [path for path in ALL_CONFIGS if not path.startswith(NEEDS_SERVER)]


def test_configs_are_found() -> None:
    assert "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py" in CONFIGS


@pytest.mark.parametrize("path", ALL_CONFIGS)
def test_spec_command_prints_the_chain(path: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-m", "spec", "-c", str(ROOT / path)]) == 0
    table = capsys.readouterr().out
    predicted = spec_trace_from_config(*read_config(str(ROOT / path)))[-1][1]
    assert describe_space(predicted.observation) in table and describe_space(predicted.action) in table


@pytest.mark.parametrize("path", CONFIGS)
def test_spec_prediction_matches_real_env(path: str) -> None:
    main_config, create_config = read_config(str(ROOT / path))
    cfg = compile_config(main_config, create_config, require_policy=False)
    spec = spec_trace_from_config(main_config, create_config)[-1][1]  # what ding -m spec prints: training envs
    if cfg.policy.get("multi_agent"):  # one agent's observation: a row of agent_state
        assert (cfg.policy.model.agent_num, cfg.policy.model.agent_obs_shape) == spec.observation["agent_state"].shape
    else:
        assert tuple(np.atleast_1d(cfg.policy.model.obs_shape)) == spec.observation.shape
    for is_train in (True, False):
        env_cfg: Any = {**cfg.env, "is_train": is_train}
        predicted = env_class(cfg.env).spaces_from_config(env_cfg)  # evaluation envs may differ (reward bounds)
        assert predicted.shapes == spec.shapes
        if is_train:
            assert predicted == spec
        env = env_class(cfg.env)(cfg=env_cfg)
        assert (env.observation_space, env.action_space, env.reward_space) == tuple(predicted)
        env.seed(0)
        assert_matches_space(env.reset(), predicted.observation, "obs after reset")
        for t in range(20):
            ts = env.step(env.random_action())
            assert_matches_space(ts.obs, predicted.observation, f"obs at step {t}")
            assert_matches_space(ts.reward, predicted.reward, f"reward at step {t}")
            if ts.done:
                env.reset()
        env.close()
