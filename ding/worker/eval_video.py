"""``EvalVideos``: one mp4 per evaluator episode, named by train iteration, env and episode, never overwritten.

The envs record themselves (``enable_save_replay``: each env writes its episodes in its own process). For an
evaluation the manager points every env at its own directory under a hidden staging directory inside the video
directory; when an env ends an episode its video is already written, and it is moved to its final name
``eval_iter<train_iter:06d>_env<env_id>_ep<k>.mp4`` (``k`` counts the env's episodes of that evaluation from 1).
A name already taken (a re-run into the same directory, or two evaluations at one train iteration) gets
``_run2``, ``_run3``, ... before ``.mp4``.
"""

from __future__ import annotations

import os
import shutil
import tempfile

from ding.envs.env_manager import BaseEnvManager
from ding.errors import EnvManagerError
from ding.utils.video_files import move_unclobbered


def eval_video_name(train_iter: int, env_id: int, episode: int, run: int = 1) -> str:
    """The file name of an evaluator episode's video (``run`` > 1 when the plain name is taken).

    >>> eval_video_name(100, 0, 1), eval_video_name(100, 0, 1, run=2)
    ('eval_iter000100_env0_ep1.mp4', 'eval_iter000100_env0_ep1_run2.mp4')
    """
    stem = f"eval_iter{train_iter:06d}_env{env_id}_ep{episode}"
    return f"{stem}.mp4" if run == 1 else f"{stem}_run{run}.mp4"


class EvalVideos:
    """Record the episodes of evaluations into ``directory`` (see the module docstring).

    Call :meth:`start` before an evaluation resets the envs, :meth:`episode_done` when an env ends a counted
    episode, :meth:`discard` when an env's episode is abandoned (abnormal), and :meth:`finish` afterwards.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = os.fspath(directory)
        self._staging: str | None = None
        self._train_iter = 0
        self._episodes: dict[int, int] = {}

    def start(self, env: BaseEnvManager, train_iter: int) -> None:
        """Point every env of ``env`` at a fresh staging directory; videos are named with ``train_iter``."""
        self.finish()
        os.makedirs(self.directory, exist_ok=True)
        self._staging = tempfile.mkdtemp(prefix=".recording-", dir=self.directory)
        self._train_iter = int(train_iter)
        self._episodes = {}
        env.enable_save_replay([self._env_dir(env_id) for env_id in range(env.env_num)])

    def episode_done(self, env_id: int) -> str:
        """Move the video env ``env_id`` wrote for the episode it just ended to its final name; return the path."""
        written = self._written(env_id)
        if not written:
            raise EnvManagerError(
                f"evaluator env {env_id} ended an episode but wrote no video into {self._env_dir(env_id)}: its env "
                "class's enable_save_replay does not record (envs built on DingEnvWrapper do); record no video for it"
            )
        for extra in written[:-1]:  # left over from an earlier, abandoned episode
            os.unlink(extra)
        episode = self._episodes[env_id] = self._episodes.get(env_id, 0) + 1
        path, _ = move_unclobbered(
            written[-1],
            self.directory,
            lambda n: eval_video_name(self._train_iter, env_id, episode, run=n),
            start=1,
        )
        return path

    def discard(self, env_id: int) -> None:
        """Delete what env ``env_id`` wrote for an episode that does not count."""
        for path in self._written(env_id):
            os.unlink(path)

    def finish(self) -> None:
        """Remove the staging directory (videos of unfinished episodes go with it)."""
        if self._staging is not None:
            shutil.rmtree(self._staging)
            self._staging = None

    def _env_dir(self, env_id: int) -> str:
        if self._staging is None:
            raise RuntimeError("EvalVideos.start must be called before an evaluation records")
        return os.path.join(self._staging, f"env{env_id}")

    def _written(self, env_id: int) -> list[str]:
        directory = self._env_dir(env_id)
        if not os.path.isdir(directory):
            return []
        names = [name for name in os.listdir(directory) if name.endswith(".mp4") and not name.startswith(".")]
        return sorted(os.path.join(directory, name) for name in names)
