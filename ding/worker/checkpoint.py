"""Checkpoint files written atomically and durably: :func:`save_checkpoint`.

A checkpoint is written to ``<name>.tmp``, flushed to disk, renamed over ``<name>``, and the directory flushed too,
so neither a crash nor a power loss leaves a partial or empty file under the final name; a stop signal waits until
the file is complete. Reading them, and their names, is :mod:`ding.utils.checkpoint_files`.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
from collections.abc import Mapping
from typing import Any

import torch

from ding.utils.checkpoint_files import TMP_SUFFIX
from ding.worker.interrupt import critical_section


def save_checkpoint(state: Mapping[str, Any], path: str | os.PathLike[str]) -> pathlib.Path:
    """Write ``state`` with ``torch.save`` atomically and durably (see the module docstring); return the path.

    Example:
        >>> import tempfile
        >>> from ding.utils.checkpoint_files import read_checkpoint
        >>> with tempfile.TemporaryDirectory() as tmp:
        ...     path = save_checkpoint({'model': {'w': torch.zeros(2)}}, pathlib.Path(tmp, 'ckpt', 'a.pth.tar'))
        ...     sorted(p.name for p in path.parent.iterdir()), read_checkpoint(path)['model']['w'].tolist()
        (['a.pth.tar'], [0.0, 0.0])
    """
    target = pathlib.Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(target.name + TMP_SUFFIX)
    with critical_section():  # a stop signal waits until the file is complete
        with temporary.open("wb") as file:
            torch.save(dict(state), file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, target)
        fsync_directory(target.parent)
    return target


def fsync_directory(folder: str | os.PathLike[str]) -> None:
    """Flush a directory's entries (a rename in it) to disk; a no-op where directories cannot be opened."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # Windows: a directory cannot be opened (its renames are durable by themselves)
        return
    try:
        with contextlib.suppress(OSError):  # some file systems do not sync directories
            os.fsync(descriptor)
    finally:
        os.close(descriptor)
