"""compile_config on DI-engine-style envs (no raw_spaces): model shapes come from one env built in a child process."""

from __future__ import annotations

import os
import pathlib
import uuid
from collections.abc import Iterator
from typing import Any, ClassVar

import numpy as np
import pytest
from gymnasium import spaces

from ding.config import compile_config
from ding.envs import BaseEnv, BaseEnvTimestep
from ding.envs.env_registry import ENV_REGISTRY
from ding.errors import ConfigError


class PropertySpacesEnv(BaseEnv):
    """Written DI-engine's way: no raw_spaces, spaces set in __init__ (or, with ``late``, in reset)."""

    config: ClassVar[dict[str, Any]] = {"size": 3, "n_actions": 4, "late": False, "pid_file": None, "fail": False}

    def __init__(self, cfg: dict[str, Any]) -> None:
        self._cfg = cfg
        if cfg["pid_file"] is not None:
            pathlib.Path(cfg["pid_file"]).write_text(str(os.getpid()))
        if cfg["fail"]:
            raise RuntimeError("simulator licence not found")
        if not cfg["late"]:
            self._set_spaces()

    def _set_spaces(self) -> None:
        self._observation_space = spaces.Box(-1.0, 1.0, (self._cfg["size"],), np.float32)
        self._action_space = spaces.Discrete(self._cfg["n_actions"])
        self._reward_space = spaces.Box(-1.0, 1.0, (1,), np.float32)

    def reset(self) -> np.ndarray:
        self._set_spaces()
        return np.zeros(self._cfg["size"], np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        return BaseEnvTimestep(np.zeros(self._cfg["size"], np.float32), np.zeros(1, np.float32), True, {})

    def close(self) -> None:
        pass

    def __repr__(self) -> str:
        return "PropertySpacesEnv()"


@pytest.fixture
def env_type() -> Iterator[str]:
    name = f"property_spaces_{uuid.uuid4().hex[:8]}"
    ENV_REGISTRY.register(name)(PropertySpacesEnv)
    yield name
    ENV_REGISTRY.unregister(name)


def compile_probed(env_type: str, env: dict[str, Any], model: dict[str, Any] | None = None) -> Any:
    main = {"env": env, "policy": {"cuda": False, "model": model or {}}}
    return compile_config(main, {"env": {"type": env_type}, "policy": {"type": "dqn"}})


def test_the_class_declares_no_spaces() -> None:
    assert not PropertySpacesEnv.declares_spaces()


def test_shapes_are_probed_from_one_env_built_in_a_child_process(env_type: str, tmp_path: pathlib.Path) -> None:
    pid_file = tmp_path / "pid"
    cfg = compile_probed(env_type, {"size": 5, "n_actions": 3, "pid_file": str(pid_file)})
    assert (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (5, 3)
    assert int(pid_file.read_text()) != os.getpid()


def test_spaces_an_env_sets_only_in_reset_are_probed_after_a_reset(env_type: str, tmp_path: pathlib.Path) -> None:
    cfg = compile_probed(env_type, {"size": 7, "late": True, "pid_file": str(tmp_path / "pid")})
    assert (cfg.policy.model.obs_shape, cfg.policy.model.action_shape) == (7, 4)


def test_with_both_shapes_given_the_env_is_not_built(env_type: str, tmp_path: pathlib.Path) -> None:
    pid_file = tmp_path / "pid"
    cfg = compile_probed(env_type, {"pid_file": str(pid_file)}, {"obs_shape": 3, "action_shape": 4})
    assert cfg.policy.model.obs_shape == 3 and not pid_file.exists()


def test_a_given_shape_is_checked_against_the_probed_spaces(env_type: str, tmp_path: pathlib.Path) -> None:
    with pytest.raises(
        ConfigError, match=r"policy\.model\.obs_shape is 8, but env '.*' produces observations of shape 3"
    ):
        compile_probed(env_type, {"pid_file": str(tmp_path / "pid")}, {"obs_shape": 8})


def test_an_env_that_fails_to_build_is_a_config_error_with_its_message(env_type: str, tmp_path: pathlib.Path) -> None:
    with pytest.raises(
        ConfigError, match=r"cannot fill policy\.model shapes .*RuntimeError: simulator licence not found"
    ):
        compile_probed(env_type, {"fail": True, "pid_file": str(tmp_path / "pid")})


def test_env_keys_stay_strict_for_such_envs(env_type: str) -> None:
    with pytest.raises(ConfigError, match=r"unknown config key 'env\.n_action'.*Did you mean 'n_actions'"):
        compile_probed(env_type, {"n_action": 3})


class ConfiglessEnv(BaseEnv):
    """A DI-engine env as most are written: no ``config`` class attribute, keys read from ``cfg`` as given."""

    def __init__(self, cfg: dict[str, Any]) -> None:
        self._observation_space = spaces.Box(-1.0, 1.0, (cfg.get("size", 3),), np.float32)
        self._action_space = spaces.Discrete(2)

    def reset(self) -> np.ndarray:
        return np.zeros(self._observation_space.shape, np.float32)

    def step(self, action: Any) -> BaseEnvTimestep:
        return BaseEnvTimestep(self.reset(), np.zeros(1, np.float32), True, {})

    def close(self) -> None:
        pass


def test_an_env_without_a_declared_config_takes_any_key_but_the_manager_section_stays_checked() -> None:
    assert not ConfiglessEnv.declares_config() and PropertySpacesEnv.declares_config()
    name = f"configless_{uuid.uuid4().hex[:8]}"
    ENV_REGISTRY.register(name)(ConfiglessEnv)
    try:
        create = {"env": {"type": name}, "env_manager": {"type": "base"}, "policy": {"type": "dqn"}}
        cfg = compile_config({"env": {"size": 5, "map_name": "3m"}}, create, require_policy=False)
        assert cfg.env.map_name == "3m" and cfg.policy.model.obs_shape == 5
        with pytest.raises(ConfigError, match=r"unknown config key 'env.manager.max_retyr'.*Did you mean 'max_retry'"):
            compile_config({"env": {"manager": {"max_retyr": 3}}}, create, require_policy=False)
    finally:
        ENV_REGISTRY.unregister(name)
