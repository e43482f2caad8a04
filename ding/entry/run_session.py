"""``run_session``: what every training pipeline call is wrapped in, from the ``ding`` command or from a script.

- SIGINT and SIGTERM stop the run through its Ctrl-C path (a checkpoint, the env managers closed, the result
  saying which signal: :mod:`ding.worker.interrupt`), and the handlers that were there before come back after;
- the run's log lines and summary are shown as the ``ding`` command shows them when nothing else configured
  logging (:func:`~ding.entry.run_output.pipeline_output`), so ``python cfg.py`` prints what ``ding -m serial``
  prints.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from ding.entry.run_output import RunSummary, pipeline_output, print_result
from ding.worker.interrupt import stop_on_signals

P = ParamSpec("P")
R = TypeVar("R", bound=RunSummary)


def run_session(pipeline: Callable[P, R]) -> Callable[P, R]:
    """Wrap a pipeline function (returning a result with ``summary()``) in the session described above."""

    @functools.wraps(pipeline)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with stop_on_signals(), pipeline_output() as shown:
            result = pipeline(*args, **kwargs)
            if shown:
                print_result(result)
        return result

    return run
