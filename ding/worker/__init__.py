"""The serial pipeline's workers: replay buffer, sample collector, evaluator, learner and experiment logger."""

from ding.utils.checkpoint_files import CheckpointError, load_checkpoint, read_checkpoint
from ding.worker.checkpoint import save_checkpoint
from ding.worker.collector import CollectorStats, SampleSerialCollector
from ding.worker.eval_result import EvalResult
from ding.worker.evaluator import InteractionSerialEvaluator
from ding.worker.learner import BaseLearner
from ding.worker.logger import EVAL_CSV_COLUMNS, ExperimentLogger
from ding.worker.replay_buffer import NaiveReplayBuffer

__all__ = [
    "EVAL_CSV_COLUMNS",
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
