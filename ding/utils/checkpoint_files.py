"""Checkpoint files: their names, and reading them as tensors and plain values only.

Every checkpoint file ding reads goes through :func:`read_checkpoint` (``torch.load(weights_only=True)``): a
file whose pickle would build other objects (and so could run code) is refused, never executed. The serial pipeline
writes them (:func:`ding.worker.checkpoint.save_checkpoint`); policies, the learner and the entry points read them.
A leftover ``*.tmp`` is an interrupted save (:func:`incomplete_saves`).
"""

from __future__ import annotations

import os
import pathlib
import re
from collections.abc import Mapping
from typing import Any

import torch

from ding.errors import DingError

CKPT_BEST = "ckpt_best.pth.tar"
TMP_SUFFIX = ".tmp"
ITERATION_CKPT = re.compile(r"^iteration_(\d+)\.pth\.tar$")
CHECKPOINT_NAMES = "ckpt/iteration_<N>.pth.tar or ckpt/ckpt_best.pth.tar"
UNSAFE_GLOBAL = re.compile(r"unsupported global:? (?:GLOBAL )?([\w.]+)", re.IGNORECASE)
"""What torch's weights-only unpickler says of a pickle that names a function or class (``posix.system``)."""


class CheckpointError(DingError, ValueError):
    """A file that should be a checkpoint is missing, unreadable or holds no model state."""


def iteration_ckpt_name(train_iter: int) -> str:
    """The name of the periodic checkpoint at ``train_iter`` (``iteration_<N>.pth.tar``).

    >>> iteration_ckpt_name(622)
    'iteration_622.pth.tar'
    """
    return f"iteration_{train_iter}.pth.tar"


def iteration_of(name: str) -> int | None:
    """The ``N`` of ``iteration_<N>.pth.tar``, None for any other name.

    >>> iteration_of('iteration_622.pth.tar'), iteration_of('ckpt_best.pth.tar')
    (622, None)
    """
    match = ITERATION_CKPT.match(name)
    return int(match.group(1)) if match else None


def iteration_checkpoints(ckpt_dir: str | os.PathLike[str]) -> dict[int, pathlib.Path]:
    """The complete ``iteration_<N>.pth.tar`` files of ``ckpt_dir`` by ``N`` (empty when there is none)."""
    found: dict[int, pathlib.Path] = {}
    folder = pathlib.Path(ckpt_dir)
    if folder.is_dir():
        for path in folder.iterdir():
            number = iteration_of(path.name)
            if number is not None and path.is_file():
                found[number] = path
    return dict(sorted(found.items()))


def incomplete_saves(ckpt_dir: str | os.PathLike[str]) -> list[pathlib.Path]:
    """The ``*.tmp`` files of ``ckpt_dir``: saves a crash or a kill interrupted before their rename."""
    folder = pathlib.Path(ckpt_dir)
    return sorted(folder.glob("*" + TMP_SUFFIX)) if folder.is_dir() else []


def read_checkpoint(path: str | os.PathLike[str]) -> Any:
    """What a checkpoint file holds: tensors and plain values only (``torch.load(..., weights_only=True)``).

    A directory, a missing file, a file that is not a torch file, and one whose pickle would build other objects
    (code could run) raise :class:`CheckpointError` in one line naming the file.
    """
    file = pathlib.Path(path)
    if file.is_dir():
        raise CheckpointError(directory_message(file))
    if not file.is_file():
        raise CheckpointError(f"checkpoint {file} does not exist")
    try:
        return torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # torch raises many kinds for a file that is not a checkpoint
        unsafe = UNSAFE_GLOBAL.search(str(err))
        if unsafe is not None:
            raise CheckpointError(
                f"{file} is refused: its pickle would call {unsafe.group(1)}, and a checkpoint may hold only tensors "
                "and plain values (nothing in it is run)"
            ) from err
        first = (str(err).strip().splitlines() or [""])[0].split(". ")[0].rstrip(".")
        raise CheckpointError(f"{file} is not a ding checkpoint (torch.load: {type(err).__name__}: {first})") from err


def load_checkpoint(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a checkpoint written by :func:`save_checkpoint`: a dict with the policy's ``model`` state at least."""
    state = read_checkpoint(path)
    if not isinstance(state, dict) or "model" not in state:
        raise CheckpointError(f"{path} is not a ding checkpoint: it holds no 'model' state")
    return state


def directory_message(folder: pathlib.Path) -> str:
    """Why a directory is not a checkpoint, with the checkpoints found in it (or in its ``ckpt/``)."""
    found = sorted(
        {p for pattern in ("*.pth.tar", "ckpt/*.pth.tar") for p in folder.glob(pattern) if p.is_file()},
        key=lambda p: (iteration_of(p.name) is None, iteration_of(p.name) or 0, p.name),
    )
    listed = f"; found: {', '.join(str(p) for p in found)}" if found else "; it holds none"
    return f"{folder} is a directory, not a checkpoint file; checkpoints are {CHECKPOINT_NAMES}{listed}"


def checkpoint_counter(state: Mapping[str, Any], key: str, source: str | os.PathLike[str] = "the checkpoint") -> int:
    """The counter ``key`` (``last_iter``, ``last_step``, ``last_episode``) of a loaded checkpoint, 0 if absent."""
    value = state.get(key, 0)
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CheckpointError(f"checkpoint {source} has an invalid {key!r}: {value!r}")
    return value
