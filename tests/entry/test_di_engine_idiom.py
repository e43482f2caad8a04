"""DI-engine's Python idiom: import a dizoo config package's objects, change them as EasyDicts, train."""

from __future__ import annotations

import copy
import pathlib

from easydict import EasyDict

from ding.config import read_config
from ding.entry import serial_pipeline


def test_config_objects_from_the_package_are_changed_as_easydicts_and_train(tmp_path: pathlib.Path) -> None:
    from dizoo.classic_control.cartpole.config import cartpole_dqn_config, cartpole_dqn_create_config

    assert isinstance(cartpole_dqn_config, EasyDict) and isinstance(cartpole_dqn_create_config, EasyDict)
    main_config = copy.deepcopy(cartpole_dqn_config)  # as DI-engine's tests do, the module's own stays as it is
    create_config = copy.deepcopy(cartpole_dqn_create_config)
    main_config.policy.learn.update_per_collect = 1
    result = serial_pipeline([main_config, create_config], seed=0, max_env_step=50_000, root=tmp_path)
    assert result.stop_value_reached, result.summary()
    compiled, _ = read_config(result.exp_dir / "total_config.py")
    assert compiled.policy.learn.update_per_collect == 1  # the change was applied
