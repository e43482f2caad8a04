"""Entry points: the ``ding`` command line and the pipelines it runs.

``serial_pipeline``, ``serial_pipeline_onpolicy``, ``eval_checkpoint`` and ``load_policy`` (a trained policy that
acts on numpy observations) are imported on first use, so the command line's torch-free modes (``-m spec``,
``-m bench``) start without importing torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LoadedPolicy", "eval_checkpoint", "load_policy", "serial_pipeline", "serial_pipeline_onpolicy"]


def __getattr__(name: str) -> Any:
    if name == "serial_pipeline":
        from ding.entry.serial_entry import serial_pipeline

        return serial_pipeline
    if name == "serial_pipeline_onpolicy":
        from ding.entry.serial_entry_onpolicy import serial_pipeline_onpolicy

        return serial_pipeline_onpolicy
    if name == "eval_checkpoint":
        from ding.entry.eval_entry import eval_checkpoint

        return eval_checkpoint
    if name in ("load_policy", "LoadedPolicy"):
        from ding.entry import loaded_policy

        return getattr(loaded_policy, name)
    raise AttributeError(f"module 'ding.entry' has no attribute {name!r}")
