"""Entry points: the ``ding`` command line and the pipelines it runs.

``serial_pipeline``, ``serial_pipeline_onpolicy`` and ``eval_checkpoint`` are imported on first use, so the
command line's torch-free modes (``-m spec``) start without importing torch.
"""

from __future__ import annotations

from typing import Any

__all__ = ["eval_checkpoint", "serial_pipeline", "serial_pipeline_onpolicy"]


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
    raise AttributeError(f"module 'ding.entry' has no attribute {name!r}")
