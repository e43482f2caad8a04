"""Manager settings: defaults declared on the classes, and every key of DI-engine's manager configs.

The DI-engine configs below are DI-engine 0.5.3's ``default_config()`` of ``BaseEnvManager``,
``SyncSubprocessEnvManager`` and ``AsyncSubprocessEnvManager``; each is accepted by the ding class
of the same name, and each accepted key takes effect.
"""

from __future__ import annotations

import copy
import math
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from ding.envs.env_manager import (
    ENV_MANAGER_REGISTRY,
    AsyncSubprocessEnvManager,
    BaseEnvManager,
    EnvState,
    RayEnvManager,
    SyncSubprocessEnvManager,
    ZmqEnvManager,
    create_env_manager,
    get_env_manager_cls,
    manager_default_config,
)
from ding.envs.env_manager.settings import DI_ENGINE_KEY_FATES
from ding.errors import ConfigError, WorkerTimeoutError
from ding.utils.accepts import plain_defaults
from dizoo.classic_control.cartpole.envs import CartPoleEnv
from tests.envs.env_manager.fault_envs import FaultyEnv

DI_ENGINE_BASE = {
    "episode_num": math.inf,
    "max_retry": 1,
    "retry_type": "reset",
    "auto_reset": True,
    "step_timeout": None,
    "reset_timeout": None,
    "retry_waiting_time": 0.1,
    "cfg_type": "BaseEnvManagerDict",
}
DI_ENGINE_SUBPROCESS = {
    **DI_ENGINE_BASE,
    "shared_memory": True,
    "copy_on_get": True,
    "context": "fork",
    "wait_num": math.inf,
    "step_wait_timeout": None,
    "connect_timeout": 60,
    "reset_inplace": False,
    "cfg_type": "SyncSubprocessEnvManagerDict",
}
DI_ENGINE_ASYNC = {
    **DI_ENGINE_SUBPROCESS,
    "wait_num": 2,
    "step_wait_timeout": 0.01,
    "cfg_type": "AsyncSubprocessEnvManagerDict",
}
DI_ENGINE_CONFIGS = {
    BaseEnvManager: DI_ENGINE_BASE,
    SyncSubprocessEnvManager: DI_ENGINE_SUBPROCESS,
    AsyncSubprocessEnvManager: DI_ENGINE_ASYNC,
}
CARTPOLE = partial(CartPoleEnv, cfg={})
MANAGER_CLASSES = [BaseEnvManager, SyncSubprocessEnvManager, AsyncSubprocessEnvManager, ZmqEnvManager, RayEnvManager]


@pytest.mark.parametrize("cls", MANAGER_CLASSES, ids=lambda c: c.__name__)
def test_default_config_is_a_copy_of_the_declared_defaults(cls: type[BaseEnvManager]) -> None:
    cfg = cls.default_config()
    assert cfg.cfg_type == f"{cls.__name__}Dict"
    assert {k: v for k, v in cfg.items() if k != "cfg_type"} == plain_defaults(cls.config)
    cfg.max_retry = 99
    assert cls.config["max_retry"].default == 2  # ding's default: one recovery, then raise
    assert cls.default_config().max_retry == 2


@pytest.mark.parametrize("name", ["base", "subprocess", "async_subprocess", "zmq", "ray", "base_v2", "subprocess_v2"])
def test_manager_default_config_reads_the_class_defaults(name: str) -> None:
    cls = ENV_MANAGER_REGISTRY.get(name)
    cfg = manager_default_config(name)
    assert cfg.type == name and cfg.import_names == []
    assert {k: v for k, v in cfg.items() if k not in ("type", "import_names")} == dict(cls.default_config())


def test_every_key_of_di_engine_configs_has_a_fate() -> None:
    keys = {key for cfg in DI_ENGINE_CONFIGS.values() for key in cfg} | {"type", "import_names"}
    assert keys == set(DI_ENGINE_KEY_FATES)


@pytest.mark.parametrize("cls", list(DI_ENGINE_CONFIGS), ids=lambda c: c.__name__)
def test_di_engine_default_configs_are_accepted_and_take_effect(cls: type[BaseEnvManager]) -> None:
    cfg = DI_ENGINE_CONFIGS[cls]
    manager = cls([CARTPOLE] * 2, {**cfg, "step_timeout": 7.0, "reset_timeout": 8.0})
    assert (manager._max_retry, manager._retry_type, manager._auto_reset) == (1, "reset", True)
    assert (manager._step_timeout, manager._reset_timeout) == (7.0, 8.0)
    assert manager._episode_num == math.inf and manager._retry_waiting_time == 0.1
    if cls is not BaseEnvManager:
        assert manager._connect_timeout == 60 and manager._wait_num == cfg["wait_num"]
        assert manager._step_wait_timeout == cfg["step_wait_timeout"]
    manager.launch()
    manager.step({i: 0 for i in manager.ready_obs_id})
    manager.close()


def test_create_env_manager_accepts_di_engine_keys_and_imports_modules() -> None:
    module = "tests.envs.env_manager.registered_manager"
    if "ding_test_manager" in ENV_MANAGER_REGISTRY:  # imported already (doctest collection imports it)
        ENV_MANAGER_REGISTRY.unregister("ding_test_manager")
    sys.modules.pop(module, None)
    cfg = {"type": "ding_test_manager", "import_names": [module], **DI_ENGINE_BASE}
    try:
        manager = create_env_manager(cfg, [CARTPOLE])
        assert type(manager).__name__ == "RegisteredManager" and get_env_manager_cls(cfg) is type(manager)
    finally:
        ENV_MANAGER_REGISTRY.unregister("ding_test_manager")
        sys.modules.pop(module, None)
    with pytest.raises(ConfigError, match=r"import_names must be a list of module names, got 'os'"):
        create_env_manager({"type": "base", "import_names": "os"}, [CARTPOLE])


def test_keys_that_name_the_manager_are_checked() -> None:
    SyncSubprocessEnvManager([CARTPOLE], {"type": "subprocess", "cfg_type": "anything"})
    with pytest.raises(ConfigError, match=r"env\.manager\.type is 'base', but this manager is of type subprocess"):
        SyncSubprocessEnvManager([CARTPOLE], {"type": "base"})


def test_reset_inplace_needs_auto_reset() -> None:
    SyncSubprocessEnvManager([CARTPOLE], {"reset_inplace": True})
    with pytest.raises(ConfigError, match=r"reset_inplace=True resets envs within the step, which needs auto_reset"):
        SyncSubprocessEnvManager([CARTPOLE], {"reset_inplace": True, "auto_reset": False})


# ----- attributes are the settings: assigning one changes what the manager does -------------------------
def faulty(cfgs: list[dict[str, Any]]) -> list[Any]:
    return [partial(FaultyEnv, cfg=c) for c in cfgs]


@pytest.mark.parametrize("manager_type", ["base", "subprocess"])
def test_assigning_retry_type_takes_effect(manager_type: str, tmp_path: Path) -> None:
    cfgs = [{"fault": "raise", "at_step": 2, "once_path": str(tmp_path / "fired")}]
    with create_env_manager({"type": manager_type}, faulty(cfgs)) as manager:
        manager.launch()
        before = manager.instance
        manager._retry_type = "renew"
        manager.step({0: 0})
        assert manager.step({0: 0})[0].info["abnormal"]
        assert manager.instance != before


def test_assigning_step_timeout_takes_effect_in_the_base_manager(tmp_path: Path) -> None:
    cfgs = [{"fault": "hang", "at_step": 2, "once_path": str(tmp_path / "fired")}, {}]
    with create_env_manager({"type": "base"}, faulty(cfgs)) as manager:
        manager.launch()
        manager.step({0: 0, 1: 0})
        manager._step_timeout = 0.3
        timesteps = manager.step({0: 0, 1: 0})
        assert timesteps[0].info["abnormal"] and "did not finish step within 0.3 s" in timesteps[0].info["error"]


def test_retry_waiting_time_is_waited_before_a_retried_reset(tmp_path: Path) -> None:
    durations = []
    for waiting, name in ((0.0, "a"), (0.6, "b")):
        cfgs = [{"fault": "raise_reset", "at_step": 1, "once_path": str(tmp_path / name)}]
        FaultyEnv.instances = 0  # the worker's first instance (it inherits the counter) is the faulty one
        with create_env_manager({"type": "subprocess", "retry_waiting_time": waiting}, faulty(cfgs)) as manager:
            start = time.monotonic()
            manager.launch()
            durations.append(time.monotonic() - start)
            assert manager.env_states[0] is EnvState.RUN
    assert durations[1] - durations[0] >= 0.5


def test_connect_timeout_bounds_the_launch_and_every_reset(tmp_path: Path) -> None:
    def slow() -> FaultyEnv:
        time.sleep(30)
        return FaultyEnv({})

    manager = create_env_manager({"type": "subprocess", "connect_timeout": 0.5}, [slow])
    start = time.monotonic()
    with pytest.raises(WorkerTimeoutError, match=r"did not answer within 0\.5 s"):
        manager.launch()
    assert time.monotonic() - start < 10 and manager.closed
    cfgs = [{"fault": "slow_reset", "at_step": 1, "once_path": str(tmp_path / "fired")}]
    cfg = {"type": "subprocess", "reset_timeout": None, "connect_timeout": 2.0}
    FaultyEnv.instances = 0
    with create_env_manager(cfg, faulty(cfgs)) as manager:
        start = time.monotonic()
        manager.launch()  # the stalled first reset is abandoned after 2 s and retried in a new worker
        assert manager.env_states[0] is EnvState.RUN and time.monotonic() - start >= 2.0
    assert (tmp_path / "fired").exists()


def test_configs_are_not_modified() -> None:
    cfg = copy.deepcopy(DI_ENGINE_SUBPROCESS)
    SyncSubprocessEnvManager([CARTPOLE], cfg).close()
    assert cfg == DI_ENGINE_SUBPROCESS
