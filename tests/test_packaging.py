"""The wheel as a user gets it: its files and metadata, and, in a new venv outside the repository, an install by
either spelling of an extra, a training run with videos that needs nothing installed by hand, and the spec of a config
the installed dizoo ships."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
CARTPOLE_IN_DIZOO = "classic_control/cartpole/config/cartpole_dqn_config.py"
CARTPOLE = ROOT / "dizoo" / CARTPOLE_IN_DIZOO


def source_copy(target: pathlib.Path) -> pathlib.Path:
    """The project's files (tracked, or new and not ignored) copied to ``target``, so a build writes nothing here."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target / name)
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the project's files")
    source = source_copy(tmp_path_factory.mktemp("source"))
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("ding-*.whl")
    return built


def metadata_of(wheel: pathlib.Path) -> str:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        return archive.read(name).decode()


def test_the_wheel_ships_types_license_and_the_dizoo_readme(wheel: pathlib.Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "ding/py.typed" in names and "dizoo/README.md" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = metadata_of(wheel)
    assert "License: Apache-2.0" in metadata.splitlines() or "License-Expression: Apache-2.0" in metadata
    assert "Project-URL: " in metadata and "Requires-Dist: torch>=2.1" in metadata.splitlines()


def test_every_extra_with_an_underscore_is_listed_under_both_spellings(wheel: pathlib.Path) -> None:
    headers = metadata_of(wheel).split("\n\n", 1)[0].splitlines()
    for extra in ("classic_control", "classic-control"):
        assert f"Provides-Extra: {extra}" in headers
        assert f'Requires-Dist: pygame>=2.1; extra == "{extra}"' in headers, headers


@pytest.mark.slow
def test_a_new_venv_installs_either_extra_spelling_and_trains(wheel: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """A new venv with the pip its Python carries (23.2 with Python 3.11): ``ding[classic_control]`` and
    ``ding[classic-control]`` both bring pygame; then ``ding -m serial --video`` runs from the user's folder with torch
    from the dependencies, no display and no complaint from SDL, and writes H.264 videos; ``ding -m spec`` prints the
    spec of the CartPole config the installed dizoo ships."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, ding = venv / "bin" / "python", venv / "bin" / "ding"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DISPLAY", "WAYLAND_DISPLAY")}
    env = {k: v for k, v in env.items() if k not in ("XDG_RUNTIME_DIR", "SDL_VIDEODRIVER", "VIRTUAL_ENV")}

    def pip(*args: str) -> str:
        command = [str(python), "-m", "pip", *args, "--constraint", str(CONSTRAINTS)]
        result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stderr
        return result.stdout + result.stderr

    for spelling in ("classic_control", "classic-control"):
        dry_run = pip("install", "--dry-run", f"{wheel}[{spelling}]")
        assert "does not provide the extra" not in dry_run
        assert "pygame" in dry_run.split("Would install", 1)[1], dry_run
    pip("install", "-q", f"{wheel}[classic_control]")

    shutil.copy(CARTPOLE, tmp_path / "cfg.py")
    argv = [str(ding), "-m", "serial", "-c", "cfg.py", "--train-iter", "5", "--exp-name", "run", "--video"]
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "XDG_RUNTIME_DIR" not in result.stdout + result.stderr
    videos = sorted((tmp_path / "run" / "videos").glob("*.mp4"))
    assert videos and (tmp_path / "run" / "ckpt").is_dir()
    codec = "import av, sys; print(av.open(sys.argv[1]).streams.video[0].codec_context.name)"
    probe = subprocess.run([str(python), "-c", codec, str(videos[0])], env=env, capture_output=True, text=True)
    assert probe.stdout.strip() == "h264", probe.stderr
    readme = "import importlib.resources as r; print(r.files('dizoo').joinpath('README.md').is_file())"
    shipped = subprocess.run([str(python), "-c", readme], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert shipped.stdout.strip() == "True", shipped.stderr

    # the spec of a config the wheel ships, read from the installed dizoo (not the repository's copy)
    where = "import dizoo, pathlib; print(pathlib.Path(dizoo.__file__).parent / " + repr(CARTPOLE_IN_DIZOO) + ")"
    found = subprocess.run([str(python), "-c", where], cwd=tmp_path, env=env, capture_output=True, text=True)
    installed = pathlib.Path(found.stdout.strip())
    assert installed.is_file() and venv in installed.parents, found.stdout + found.stderr
    argv = [str(ding), "-m", "spec", "-c", str(installed)]
    spec = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert spec.returncode == 0, spec.stderr
    rows = [line.split("|")[2:6] for line in spec.stdout.splitlines() if line.startswith("| 0 ")]
    assert [cell.strip() for cell in rows[0]] == ["env", "(4,) float32", "Discrete(2)", "(1,) float32"], spec.stdout
    assert "bytes per env step: 28 (obs 16 + action 8 + reward 4)" in spec.stdout
