"""The experiment directory: its name (``<exp_name>_seed<seed>``) and its creation.

``ding -m serial``, :func:`ding.entry.serial_pipeline` and ``compile_config(..., save_cfg=True)``
all name the directory with :func:`experiment_name`.
"""

from __future__ import annotations

import datetime
import pathlib
import re
from typing import Any

DEFAULT_EXP_NAME = "default_experiment"
SEED_SUFFIX = re.compile(r"_seed\d+$")


def experiment_name(config_exp_name: Any, seed: int) -> str:
    """``<name>_seed<seed>``, where a ``_seed<N>`` suffix the config's name already has is replaced.

    >>> experiment_name('cartpole_dqn_seed0', 3), experiment_name('pong', 0), experiment_name(None, 1)
    ('cartpole_dqn_seed3', 'pong_seed0', 'default_experiment_seed1')
    """
    base = config_exp_name if isinstance(config_exp_name, str) and config_exp_name else DEFAULT_EXP_NAME
    return f"{SEED_SUFFIX.sub('', base)}_seed{seed}"


def renewed_name(exp_name: str, now: datetime.datetime | None = None) -> str:
    """``exp_name`` when no such directory exists (relative to the current one), else a free ``<exp_name>_<stamp>``.

    The stamp is DI-engine's ``_%y%m%d_%H%M%S``; a counter follows it when that name is taken too.

    >>> renewed_name('surely_no_such_directory_seed0')
    'surely_no_such_directory_seed0'
    >>> renewed_name('.', datetime.datetime(2024, 5, 6, 7, 8, 9))
    '._240506_070809'
    """
    if not pathlib.Path(exp_name).exists():
        return exp_name
    stamped = exp_name + (now or datetime.datetime.now()).strftime("_%y%m%d_%H%M%S")
    candidate, counter = stamped, 1
    while pathlib.Path(candidate).exists():
        counter += 1
        candidate = f"{stamped}_{counter}"
    return candidate
