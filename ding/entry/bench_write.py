"""``ding -m bench --write NEW.py``: a new config file that reads the user's config and sets the chosen manager.

The user's config file is never changed. The new file loads it with :func:`~ding.config.read_config` at every
read (a path relative to the new file when it can be), so later edits of the user's config carry over, and then
sets ``create_config.env_manager.type`` and the chosen keys in ``main_config.env.manager``. The manager keys the
recommendation decides (:data:`~ding.entry.bench_candidates.TUNED_KEYS`) and those of the config's own manager that
the chosen type does not take are removed first; the others (``step_timeout``, ``max_retry``, ...) stay. A target that
exists is refused. The new file is read and compiled before this returns, so what it sets is known to load.

Example:
    >>> print(manager_source('cfg.py', {'type': 'subprocess', 'envs_per_worker': 2}, ['step_in_caller']))
    ... # doctest: +ELLIPSIS
    \"\"\"...\"\"\"
    <BLANKLINE>
    import pathlib
    <BLANKLINE>
    from ding.config import read_config
    <BLANKLINE>
    main_config, create_config = read_config(pathlib.Path(__file__).parent / 'cfg.py')
    create_config.env_manager = dict(create_config.get('env_manager') or {}, type='subprocess')
    manager = {k: v for k, v in (main_config.env.get('manager') or {}).items() if k not in ('type', 'step_in_caller')}
    main_config.env.manager = dict(manager, envs_per_worker=2)
    for key in ('collector_batch_size', 'evaluator_batch_size'):  # an envpool pool's batch per role
        main_config.env.pop(key, None)
    <BLANKLINE>
"""

from __future__ import annotations

import os
import pathlib
from collections.abc import Mapping, Sequence
from typing import Any

from ding.config import compile_config, read_config
from ding.entry.bench_candidates import TUNED_KEYS
from ding.envs.env_manager import manager_default_config
from ding.errors import ConfigError

ROLE_BATCH_KEYS = ("collector_batch_size", "evaluator_batch_size")
"""``env`` keys that only an envpool manager takes: the new file drops them when it chooses another manager."""
POOL_TYPES = ("envpool", "env_pool")


def removed_keys(config_manager: Mapping[str, Any], chosen_type: str) -> list[str]:
    """The keys of the user's ``main_config.env.manager`` that the new file removes: the tuned ones and those the
    chosen type does not take.

    >>> removed_keys({'step_in_caller': True, 'step_timeout': 5.0, 'max_retry': 3}, 'base')
    ['step_in_caller']
    """
    accepted = manager_default_config(chosen_type)
    return [key for key in config_manager if key in TUNED_KEYS or key not in accepted]


def manager_source(config_ref: str, settings: Mapping[str, Any], removed: Sequence[str]) -> str:
    """The new file's source: read the config at ``config_ref`` (relative to the new file's folder, or absolute),
    remove ``removed`` (and ``type``) from ``main_config.env.manager``, set ``settings`` there and the type in
    ``create_config.env_manager``."""
    keys = {key: value for key, value in settings.items() if key != "type"}
    dropped = tuple(dict.fromkeys(["type", *removed]))
    assigned = "".join(f", {key}={value!r}" for key, value in keys.items())
    where = repr(config_ref) if os.path.isabs(config_ref) else f"pathlib.Path(__file__).parent / {config_ref!r}"
    return "\n".join(
        [
            f'"""{config_ref} with the env manager that `ding -m bench` recommended: '
            f'{settings["type"]}{"".join(f" {k}={v!r}" for k, v in keys.items())}."""',
            "",
            "import pathlib",
            "",
            "from ding.config import read_config",
            "",
            f"main_config, create_config = read_config({where})",
            f"create_config.env_manager = dict(create_config.get('env_manager') or {{}}, type={settings['type']!r})",
            f"manager = {{k: v for k, v in (main_config.env.get('manager') or {{}}).items() if k not in {dropped!r}}}",
            f"main_config.env.manager = dict(manager{assigned})",
            *(
                [
                    f"for key in {ROLE_BATCH_KEYS!r}:  # an envpool pool's batch per role",
                    "    main_config.env.pop(key, None)",
                ]
                if settings["type"] not in POOL_TYPES
                else []
            ),
            "",
        ]
    )


def checked_target(target: str | os.PathLike[str]) -> pathlib.Path:
    """The absolute path of a new config file ``target``; refused when it exists, does not end in ``.py`` or its
    folder does not exist."""
    file = pathlib.Path(os.fspath(target)).expanduser().absolute()
    if file.exists():
        raise ConfigError(f"--write {target}: the file exists; ding -m bench writes a new file and overwrites none")
    if file.suffix != ".py":
        raise ConfigError(f"--write {target}: a config file is a Python file; give a name ending in .py")
    if not file.parent.is_dir():
        raise ConfigError(f"--write {target}: the folder {file.parent} does not exist")
    return file


def write_choice(
    config_path: str | os.PathLike[str], settings: Mapping[str, Any], target: str | os.PathLike[str]
) -> tuple[pathlib.Path, list[str]]:
    """Write the new config file ``target`` (see the module); refuse one that exists. Returns its path and the keys
    of the config's ``main_config.env.manager`` it removes."""
    file = checked_target(target)
    source_file = pathlib.Path(os.fspath(config_path)).expanduser().resolve()
    main_config, _ = read_config(source_file)
    config_manager = (main_config.get("env") or {}).get("manager") or {}
    removed = removed_keys(config_manager, str(settings["type"]))
    ref = os.path.relpath(source_file, file.parent.resolve())
    with open(file, "x", encoding="utf-8") as handle:  # "x": never replace a file made in the meantime
        handle.write(manager_source(ref, settings, removed))
    try:
        compile_config(*read_config(file), require_policy=False)
    except ConfigError:
        file.unlink()
        raise
    return file, removed


__all__ = ["checked_target", "manager_source", "removed_keys", "write_choice"]
