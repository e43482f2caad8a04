"""The serial pipeline's workers: replay buffer, sample collector, evaluator, learner and experiment logger.

``NaiveReplayBuffer`` and ``AdvancedReplayBuffer`` here are DI-engine's (:mod:`ding.worker.replay_buffer`), which
also take ding's own form ``NaiveReplayBuffer(replay_buffer_size, seed=0)``.
"""

from ding.utils.checkpoint_files import CheckpointError, load_checkpoint, read_checkpoint
from ding.worker.checkpoint import save_checkpoint
from ding.worker.collector import CollectorStats, SampleSerialCollector
from ding.worker.eval_result import EvalResult
from ding.worker.evaluator import InteractionSerialEvaluator
from ding.worker.learner import BaseLearner
from ding.worker.logger import EVAL_CSV_COLUMNS, ExperimentLogger
from ding.worker.replay_buffer import AdvancedReplayBuffer, NaiveReplayBuffer

__all__ = [
    "EVAL_CSV_COLUMNS",
    "AdvancedReplayBuffer",
    "BaseLearner",
    "CheckpointError",
    "CollectorStats",
    "EvalResult",
    "ExperimentLogger",
    "InteractionSerialEvaluator",
    "NaiveReplayBuffer",
    "SampleSerialCollector",
    "load_checkpoint",
    "read_checkpoint",
    "save_checkpoint",
]
