"""Every manager type is a configuration of the one manager class: at most three classes deep, no verb replaced.

A type sets class attributes (its name, declared config, settings checks and engine) and may add properties of its
own (a zmq manager's ``endpoint``, a ray manager's ``worker_actors``); it never overrides a method or property of
:class:`BaseEnvManager`, except its constructor and DI-engine's V2 interface (``ready_obs``, ``step``).
"""

from __future__ import annotations

import inspect
from functools import partial

import pytest

from ding.envs.env_manager import ENV_MANAGER_REGISTRY, BaseEnvManager, BaseEnvManagerV2
from ding.envs.env_manager.channels.pipe import PipeChannel
from ding.envs.env_manager.channels.ray.transports import TRANSPORTS
from ding.envs.env_manager.channels.threads import ThreadChannel
from ding.envs.env_manager.core.batch_core import BatchCore
from ding.envs.env_manager.in_process import InProcessEngine
from dizoo.classic_control.cartpole.envs import CartPoleEnv

MANAGER_CLASSES = sorted(
    {cls for _, cls in ENV_MANAGER_REGISTRY.items()} | set(TRANSPORTS.values()), key=lambda cls: cls.__name__
)
V2_INTERFACE = {"ready_obs", "step"}


def _behaviour(cls: type) -> set[str]:
    """The methods and properties ``cls`` defines itself."""
    return {
        name
        for name, value in vars(cls).items()
        if inspect.isfunction(value) or isinstance(value, (property, classmethod, staticmethod))
    }


@pytest.mark.parametrize("cls", MANAGER_CLASSES, ids=lambda cls: cls.__name__)
def test_a_manager_type_is_a_configuration_of_base_env_manager(cls: type[BaseEnvManager]) -> None:
    chain = [klass for klass in cls.__mro__ if klass is not object]
    assert issubclass(cls, BaseEnvManager) and len(chain) <= 3, [klass.__name__ for klass in chain]
    assert all(len(klass.__bases__) == 1 for klass in chain[:-1]), "one base per class: no diamond"
    for klass in chain[:-1]:
        replaced = (_behaviour(klass) & _behaviour(BaseEnvManager)) - {"__init__"}
        if klass is BaseEnvManagerV2:
            replaced -= V2_INTERFACE
        assert not replaced, f"{klass.__name__} replaces {sorted(replaced)} of BaseEnvManager"


@pytest.mark.parametrize(
    ("manager_type", "engine", "channel"),
    [("base", InProcessEngine, None), ("thread", BatchCore, ThreadChannel), ("subprocess", BatchCore, PipeChannel)],
)
def test_the_engine_and_channel_are_what_the_type_configures(
    manager_type: str, engine: type, channel: type | None
) -> None:
    cls = ENV_MANAGER_REGISTRY.get(manager_type)
    with cls([partial(CartPoleEnv, cfg={})] * 2, {}) as manager:
        manager.launch()
        assert isinstance(manager.engine, engine)
        assert manager.engine.channel is None if channel is None else isinstance(manager.engine.channel, channel)
        manager.step({0: 1, 1: 0})
