"""``--video`` on ``ding -m serial`` / ``serial_onpolicy`` / ``eval``, ``env.replay_path``, collector videos apart,
and ``ding -m eval``'s per-episode lines, ``--n-episode`` and ``--output`` reports (real short CartPole runs)."""

from __future__ import annotations

import copy
import csv
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from ding.config import read_config
from ding.entry import eval_checkpoint, serial_pipeline
from ding.entry.cli import main
from ding.errors import ConfigError
from tests.entry.test_cli import CARTPOLE, ROOT
from tests.utils.test_video_files import frame_count

CARTPOLE_PPO = str(ROOT / "dizoo/classic_control/cartpole/config/cartpole_ppo_config.py")
EVAL_NAME = re.compile(r"eval_iter(\d{6})_env(\d)_ep(\d)\.mp4")


def eval_iters(exp_dir: pathlib.Path) -> list[int]:
    with (exp_dir / "log" / "eval.csv").open() as file:
        return [int(row["train_iter"]) for row in csv.DictReader(file)]


def all_videos(root: pathlib.Path) -> list[pathlib.Path]:
    return sorted(root.rglob("*.mp4"))


@pytest.fixture(scope="module")
def dqn_run(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """``ding -m serial -c cartpole_dqn_config.py --train-iter 50 --video`` (evaluations at 0, 40 and 50)."""
    cwd = tmp_path_factory.mktemp("dqn_video")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cwd)
        assert main(["-m", "serial", "-c", CARTPOLE, "--train-iter", "50", "--video"]) == 0
    return cwd / "cartpole_dqn_seed0"


def test_serial_video_records_each_evaluation_episode_once(dqn_run: pathlib.Path) -> None:
    iters = eval_iters(dqn_run)
    assert iters == [0, 40, 50]
    videos = all_videos(dqn_run.parent)
    assert all(v.parent == dqn_run / "videos" for v in videos)  # evaluator only: no collector video anywhere
    names = [EVAL_NAME.fullmatch(v.name) for v in videos]
    assert all(names) and len(videos) == len(iters) * 5  # 5 evaluator envs, one episode each
    assert sorted({int(m.group(1)) for m in names if m}) == iters
    assert {m.group(2) for m in names if m} == {"0", "1", "2", "3", "4"}
    assert all(frame_count(v) >= 9 for v in videos)  # CartPole episodes last 8+ steps, plus the reset frame
    assert not [p for p in (dqn_run / "videos").iterdir() if p.name.startswith(".")]  # no staging left


def test_eval_prints_every_episode_and_writes_reports(
    dqn_run: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config, ckpt = str(dqn_run / "total_config.py"), str(dqn_run / "ckpt" / "ckpt_best.pth.tar")
    report = dqn_run.parent / "report.json"
    argv = ["-m", "eval", "-c", config, "--load-path", ckpt, "--n-episode", "7", "--video", "--output", str(report)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    episodes = [
        re.fullmatch(r"episode (\d) \(env (\d)\): return ([\d.]+), length (\d+), video (\S+)", x) for x in lines[:7]
    ]
    assert all(episodes) and [int(m.group(1)) for m in episodes if m] == list(range(1, 8))
    assert lines[7].startswith("eval return mean ") and "over 7 episodes; stop_value 195 not reached" in lines[7]
    assert lines[8] == f"wrote {report}"
    document = json.loads(report.read_text())
    rows = document["episodes"]
    assert [row["episode"] for row in rows] == list(range(1, 8)) and document["context"]["load_path"] == ckpt
    assert [f"{row['return']:.2f}" for row in rows] == [m.group(3) for m in episodes if m]
    assert all(row["return"] == row["length"] for row in rows)  # CartPole: reward 1 per step
    summary = document["summary"]
    assert summary["n_episode"] == 7 and summary["return_mean"] == pytest.approx(sum(r["return"] for r in rows) / 7)
    assert summary["stop_value"] == 195 and summary["stop_value_reached"] is False
    # --video without DIR: videos/ of the checkpoint's experiment directory, named by the checkpoint's train iter
    best_iter = int(re.search(r"eval_iter(\d+)", rows[0]["video"]).group(1))  # type: ignore[union-attr]
    for row in rows:
        video = pathlib.Path(row["video"])
        assert video.parent == dqn_run / "videos" and frame_count(video) == row["length"] + 1
        assert f"eval_iter{best_iter:06d}_env{row['env_id']}_ep" in video.name
    assert len(all_videos(dqn_run / "videos")) == 15 + 7  # the run's videos are all still there

    table = dqn_run.parent / "report.csv"
    assert main(["-m", "eval", "-c", config, "--load-path", ckpt, "--n-episode", "3", "--output", str(table)]) == 0
    with table.open() as file:
        csv_rows = list(csv.DictReader(file))
    assert [row["episode"] for row in csv_rows] == ["1", "2", "3", "mean", "std", "min", "max"]
    returns = [float(row["return"]) for row in csv_rows[:3]]
    assert float(csv_rows[3]["return"]) == pytest.approx(sum(returns) / 3)
    assert [float(row["length"]) for row in csv_rows[:3]] == returns and csv_rows[0]["video"] == ""


def test_rerun_into_the_same_directory_keeps_earlier_videos(dqn_run: pathlib.Path) -> None:
    config, ckpt = dqn_run / "total_config.py", dqn_run / "ckpt" / "ckpt_best.pth.tar"
    out = dqn_run.parent / "twice"
    first = eval_checkpoint(config, ckpt, n_episode=2, video=out)
    kept = [pathlib.Path(p).read_bytes() for p in first.videos]
    second = eval_checkpoint(config, ckpt, n_episode=2, video=out)
    assert [pathlib.Path(p).stem for p in second.videos] == [pathlib.Path(p).stem + "_run2" for p in first.videos]
    assert [pathlib.Path(p).read_bytes() for p in first.videos] == kept
    assert second.returns == first.returns


def test_replay_path_in_the_config_records_evaluator_episodes_only(tmp_path: pathlib.Path) -> None:
    main_config, create_config = read_config(CARTPOLE)
    main_config = copy.deepcopy(dict(main_config))
    main_config["env"]["replay_path"] = str(tmp_path / "from_config")
    main_config["env"].update(collector_env_num=2, evaluator_env_num=2, n_evaluator_episode=2)
    result = serial_pipeline((main_config, create_config), max_train_iter=5, root=tmp_path, progress=False)
    videos = all_videos(tmp_path)
    iters = eval_iters(result.exp_dir)
    assert len(videos) == 2 * len(iters) and all(v.parent == tmp_path / "from_config" for v in videos)
    assert all(EVAL_NAME.fullmatch(v.name) for v in videos)
    # collector videos only when asked, in their own directory; --video overrides the config's key
    again = serial_pipeline(
        (main_config, create_config),
        max_train_iter=60,
        exp_name="again",
        root=tmp_path,
        progress=False,
        video=tmp_path / "eval",
        collector_video=tmp_path / "collect",
    )
    collected = all_videos(tmp_path / "collect")
    assert {v.parent.name for v in collected} == {"env0", "env1"}
    assert all(re.fullmatch(r"replay-episode-\d{4}\.mp4", v.name) for v in collected)
    assert len(all_videos(tmp_path / "eval")) == 2 * len(eval_iters(again.exp_dir))
    assert len(all_videos(tmp_path / "from_config")) == len(videos)  # untouched by the second run


def test_serial_onpolicy_video(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["-m", "serial_onpolicy", "-c", CARTPOLE_PPO, "--train-iter", "4", "--video", "vids"]
    assert main(argv) == 0
    iters = eval_iters(tmp_path / "cartpole_ppo_seed0")
    videos = all_videos(tmp_path)
    assert len(videos) == 5 * len(iters) and all(v.parent == tmp_path / "vids" for v in videos)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["-m", "serial", "-c", CARTPOLE, "--n-episode", "3"], "--n-episode is not used by -m serial"),
        (["-m", "serial", "-c", CARTPOLE, "--output", "x.json"], "--output is not used by -m serial"),
        (["-m", "eval", "-c", CARTPOLE, "--load-path", "x", "--collector-video", "c"], "--collector-video is not used"),
        (["-m", "eval", "-c", CARTPOLE, "--load-path", "x", "--n-episode", "0"], "--n-episode must be >= 1, got 0"),
        (["-m", "spec", "-c", CARTPOLE, "--video"], "--video is not used by -m spec"),
        (["-m", "eval", "-c", CARTPOLE, "--load-path", "x", "--output", "r.txt"], "use .json or .csv"),
    ],
)
def test_option_errors(argv: list[str], match: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and match in capsys.readouterr().err


def test_evaluator_and_collector_videos_may_not_share_a_directory(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match="would share the directory"):
        serial_pipeline(CARTPOLE, root=tmp_path, video=tmp_path / "v", collector_video=tmp_path / "v")
    main_config, create_config = read_config(CARTPOLE)
    main_config.env.replay_path = 3
    with pytest.raises(ConfigError, match=r"env\.replay_path must be a str or None \(a directory path .*\), got 3"):
        serial_pipeline((main_config, create_config), root=tmp_path)


def test_video_run_on_a_machine_without_display_prints_nothing_from_sdl(tmp_path: pathlib.Path) -> None:
    """CartPole draws with pygame; without a display SDL is given its off-screen driver instead of printing that
    ``XDG_RUNTIME_DIR is invalid`` (the console script, from the user's own folder)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR")}
    env = {k: v for k, v in env.items() if k != "SDL_VIDEODRIVER"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    ding = pathlib.Path(sys.executable).parent / "ding"
    argv = [str(ding), "-m", "serial", "-c", CARTPOLE, "--train-iter", "5", "--exp-name", "run", "--video"]
    result = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "XDG_RUNTIME_DIR" not in result.stderr + result.stdout
    videos = all_videos(tmp_path / "run" / "videos")
    assert videos and all(frame_count(v) >= 9 for v in videos)
