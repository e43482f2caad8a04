"""``compile_config`` holds every value to what its key accepts: one ``ConfigError`` naming the key path, the value and
what is accepted, before anything is built; ``ding -m spec`` prints it as one ``ding: error:`` line."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import pytest

from ding.config import compile_config, read_config, save_config
from ding.errors import ConfigError
from tests.ding_cli import ROOT, run_ding

CARTPOLE_DQN = ROOT / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py"
PENDULUM_SAC = ROOT / "dizoo/classic_control/pendulum/config/pendulum_sac_config.py"


def with_value(path: str, value: Any, config: pathlib.Path = CARTPOLE_DQN) -> tuple[dict[str, Any], dict[str, Any]]:
    """The config file's ``(main_config, create_config)`` with ``value`` at the dotted ``path`` of ``main_config``."""
    main, create = read_config(config)
    *parents, key = path.split(".")
    node: Any = main
    for part in parents:
        node = node.setdefault(part, {})
    node[key] = value
    return main, create


ENVS_COLLECTING = "an int in [1, 1024] (envs collecting samples)"
SECONDS = "a finite number of seconds > 0 or None"


@pytest.mark.parametrize(
    ("path", "value", "accepted"),
    [
        ("policy.learn.learning_rate", -1, "a finite number > 0"),
        ("policy.learn.learning_rate", None, "a finite number > 0"),
        ("env.collector_env_num", -2, ENVS_COLLECTING),
        ("env.collector_env_num", math.nan, ENVS_COLLECTING),
        ("env.collector_env_num", [1, 2], ENVS_COLLECTING),
        ("env.evaluator_env_num", 10**9, "an int in [1, 1024] (envs playing evaluation episodes)"),
        ("policy.learn.batch_size", 0, "a positive int"),
        ("policy.learn.batch_size", 64.0, "a positive int"),
        ("policy.discount_factor", 3, "a number in (0, 1]"),
        ("policy.other.eps.type", "cosine", "one of 'exp', 'linear'"),
        ("policy.other.replay_buffer.replay_buffer_size", 1e4, "a positive int"),
        ("policy.model.head_layer_num", 10**9, "an int in [0, 100]"),
        ("env.stop_value", math.nan, "a number other than NaN or None (the mean evaluation return that ends training; "
         "None: none does)"),
        ("env.max_episode_steps", True, "a positive int or None (None: no time limit)"),
        ("env.manager.max_retry", 0, "a positive int (attempts per failure; 1 = no retry)"),
        ("env.manager.step_timeout", math.inf, f"{SECONDS} (the time a step may take; set: envs run on per-env "
         "threads)"),
        ("policy.learn.learner.hook.save_ckpt_after_iter", -5, "a positive int"),
    ],
)  # fmt: skip
def test_compile_refuses_a_wrong_value_naming_key_value_and_what_is_accepted(
    path: str, value: Any, accepted: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        compile_config(*with_value(path, value))
    assert str(refused.value) == f"{path} must be {accepted}, got {value!r}"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        ("env.stop_value", 195.5),
        ("env.stop_value", None),
        ("env.stop_value", math.inf),  # never reached, as None
        ("policy.other.eps.decay", 1e5),  # DI-engine's configs write the decay as a float too
        ("policy.other.replay_buffer.replay_buffer_size", int(1e5)),
        ("policy.learn.learning_rate", 1),  # an int for a real number
        ("policy.learn.target_theta", 0.01),  # None by default
        ("env.max_episode_steps", None),
        ("env.collector_env_num", 1024),
    ],
)
def test_compile_accepts_every_form_di_engine_configs_use(path: str, value: Any) -> None:
    cfg = compile_config(*with_value(path, value))
    section: Any = cfg
    for part in path.split("."):
        section = section[part]
    assert section == value or (value is None and section is None)


def test_a_policy_built_directly_holds_its_config_to_the_same_declarations() -> None:
    from ding.policy.sac import SACPolicy

    with pytest.raises(ConfigError, match=r"^policy\.learn\.alpha must be a finite number > 0, got nan$"):
        SACPolicy({"model": {"obs_shape": 3, "action_shape": 1}, "learn": {"alpha": math.nan}})
    with pytest.raises(ConfigError, match=r"^policy\.learn\.alpha must be a finite number > 0, got nan$"):
        compile_config(*with_value("policy.learn.alpha", math.nan, PENDULUM_SAC))


def test_an_env_built_directly_holds_its_config_to_the_same_declarations() -> None:
    from ding.envs.base_env import BaseEnv
    from dizoo.classic_control.cartpole.envs import CartPoleEnv

    with pytest.raises(ConfigError, match=r"^env\.max_episode_steps must be a positive int or None"):
        CartPoleEnv({"max_episode_steps": -1})
    with pytest.raises(ConfigError, match=r"^env\.collector_env_num must be an int in \[1, 1024\]"):
        BaseEnv.create_collector_env_cfg({"collector_env_num": -2})


@pytest.mark.parametrize(("path", "value"), [("env.collector_env_num", -2), ("env.collector_env_num", math.nan)])
def test_ding_spec_prints_one_error_line_for_a_wrong_value(path: str, value: Any, tmp_path: pathlib.Path) -> None:
    config = save_config(*with_value(path, value), tmp_path / "my_config.py")
    result = run_ding("-m", "spec", "-c", str(config), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"ding: error: env.collector_env_num must be an int in [1, 1024] (envs collecting samples), got {value!r}"
    ]
