"""Multi-agent envs behind every manager kind: the same seeds and actions give the serial manager's trajectories.

Real envs: MPE ``simple_spread`` (DI-engine's dict observation, one Discrete action per agent) and
Knights-Archers-Zombies, where one knight leaves mid-episode (see ``test_multi_agent_env``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pettingzoo")
pytest.importorskip("mpe2")

from ding.envs.multi_agent import ParallelEnvWrapper
from tests.envs.env_manager.conftest import make_manager, ray_cluster  # noqa: F401  (ray_cluster: a fixture)
from tests.envs.env_manager.envs import Trajectories, assert_tree_equal, play

SPREAD = {"env_id": "mpe2.simple_spread_v3", "env_kwargs": {"max_cycles": 8}}
KAZ = {
    "env_id": "pettingzoo.butterfly.knights_archers_zombies_v11",
    "env_kwargs": {"line_death": True, "max_cycles": 30},
}
ENVS: dict[str, tuple[dict[str, Any], Callable[[int, int, Any], Any]]] = {
    "spread": (SPREAD, lambda env_id, k, obs: np.array([(k + env_id) % 5, k % 5, (2 * k) % 5])),
    "kaz": (KAZ, lambda env_id, k, obs: np.array([5, 5, 0, 5]) if env_id == 0 else np.array([5, 5, 5, 5])),
}
KINDS = [
    "base",
    "subprocess-1",
    "subprocess-2",
    "in-caller",
    "async",
    "zmq",
    pytest.param("spawn", marks=pytest.mark.slow),
    pytest.param("ray", marks=pytest.mark.slow),
]


def without_clock(info: Mapping[str, Any]) -> dict[str, Any]:
    """``info`` without the wall-clock entries ``episode.t`` (they differ between runs), its agents' too."""
    out = dict(info)
    if "episode" in out:
        out["episode"] = {key: value for key, value in out["episode"].items() if key != "t"}
    if "agent_infos" in out:
        out["agent_infos"] = {agent: without_clock(sub) for agent, sub in out["agent_infos"].items()}
    return out


def run(kind: str, env: str, env_num: int = 2, **cfg: Any) -> Trajectories:
    env_cfg, policy = ENVS[env]
    with make_manager(kind, [partial(ParallelEnvWrapper, cfg=env_cfg)] * env_num, episode_num=2, **cfg) as manager:
        assert manager.observation_space == ParallelEnvWrapper.spaces_from_config(env_cfg).observation
        manager.seed(3)
        manager.launch()
        return play(manager, policy)


@pytest.mark.parametrize("env", sorted(ENVS))
@pytest.mark.parametrize("kind", KINDS)
def test_trajectories_match_the_serial_manager(kind: str, env: str, request: pytest.FixtureRequest) -> None:
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    expected, actual = run("base", env), run(kind, env)
    assert sorted(actual) == sorted(expected)
    for env_id, steps in expected.items():
        assert len(actual[env_id]) == len(steps) > 0
        for k, (a, e) in enumerate(zip(actual[env_id], steps, strict=True)):
            where = f"env {env_id} step {k}"
            for field in ("before", "action", "obs", "reward", "done", "terminated", "truncated"):
                assert_tree_equal(getattr(a, field), getattr(e, field), f"{where} {field}")
            assert_tree_equal(without_clock(a.info), without_clock(e.info), f"{where} info")


@pytest.mark.parametrize("kind", ["subprocess-1", "async"])
def test_an_agent_leaving_crosses_shared_memory(kind: str) -> None:
    trajectories = run(kind, "kaz", shared_memory=True)
    steps = trajectories[0][:30]  # env 0's first episode: knight_0 leaves at step 23
    assert steps[-1].done and steps[-1].info["episode"]["l"].tolist() == [30, 30, 24, 30]
    assert steps[25].obs["alive"].tolist() == [1.0, 1.0, 0.0, 1.0] and not steps[25].obs["agent_state"][2].any()
    assert trajectories[1][-1].info["episode"]["l"].tolist() == [30] * 4  # env 1's knights stay
    returns = [step.info["eval_episode_return"] for step in trajectories[0] if step.done]
    assert len(returns) == 2 and all(r.shape == (1,) and r.dtype == np.float32 for r in returns)
