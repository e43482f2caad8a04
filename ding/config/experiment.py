"""The experiment directory: its name (``<exp_name>_seed<seed>``) and its renewed names (``<name>_<yymmdd_HHMMSS>``).

``ding -m serial``, :func:`ding.entry.serial_pipeline` and ``compile_config(..., save_cfg=True)``
all name the directory with :func:`experiment_name`.
"""

from __future__ import annotations

import datetime
import itertools
import os
import pathlib
import re
from collections.abc import Iterator
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

    The stamp is DI-engine's ``_%y%m%d_%H%M%S``; a counter follows it when that name is taken too
    (:func:`stamped_names`). :func:`claim_renewed` creates the name it picks, for runs that may start together.

    >>> renewed_name('surely_no_such_directory_seed0')
    'surely_no_such_directory_seed0'
    >>> renewed_name('.', datetime.datetime(2024, 5, 6, 7, 8, 9))
    '._240506_070809'
    """
    if not pathlib.Path(exp_name).exists():
        return exp_name
    return next(name for name in stamped_names(exp_name, now) if not pathlib.Path(name).exists())


def stamped_names(exp_name: str, now: datetime.datetime | None = None) -> Iterator[str]:
    """The renewed names of ``exp_name`` in the order they are tried: the stamp, then the stamp with ``_2``, ``_3``...

    >>> names = stamped_names('run_seed0', datetime.datetime(2024, 5, 6, 7, 8, 9))
    >>> [next(names) for _ in range(3)]
    ['run_seed0_240506_070809', 'run_seed0_240506_070809_2', 'run_seed0_240506_070809_3']
    """
    stamped = exp_name + (now or datetime.datetime.now()).strftime("_%y%m%d_%H%M%S")
    yield stamped
    for counter in itertools.count(2):
        yield f"{stamped}_{counter}"


def claim_renewed(root: str | os.PathLike[str], exp_name: str, now: datetime.datetime | None = None) -> str:
    """Create ``<root>/<renewed name>`` (the first of :func:`stamped_names` that no one created) and return the name.

    Creating the directory is the claim: of runs that start in the same second, each gets its own.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     when = datetime.datetime(2024, 5, 6, 7, 8, 9)
    ...     claim_renewed(tmp, 'run_seed0', when), claim_renewed(tmp, 'run_seed0', when)
    ('run_seed0_240506_070809', 'run_seed0_240506_070809_2')
    """
    for name in stamped_names(exp_name, now):
        path = pathlib.Path(root, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return name
    raise AssertionError("unreachable: stamped_names never ends")
