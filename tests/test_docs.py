"""The documentation site builds with warnings as errors, runs the examples in its pages, and its generated pages
say what the code declares: every config key with what it accepts, every registered wrapper, every mode and option
of the command line, every error class, the public API."""

from __future__ import annotations

import html
import inspect
import pathlib
import re
import subprocess
import sys

import pytest

import ding.errors
from ding.entry.cli import MODES, build_parser
from ding.envs.env_wrappers import WRAPPER_REGISTRY
from tests.envs.env_wrappers.catalogue import ALE_CATALOGUE, shape_cases

pytest.importorskip("sphinx")
pytest.importorskip("furo")
pytest.importorskip("myst_parser")

ROOT = pathlib.Path(__file__).resolve().parents[1]


def sphinx(builder: str, out: pathlib.Path, doctrees: pathlib.Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", builder, "-d", str(doctrees)]
    return subprocess.run([*argv, str(ROOT / "docs"), str(out)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("site")
    built = sphinx("html", out / "html", out / "doctrees")
    assert built.returncode == 0, built.stderr
    return out


def text_of(page: pathlib.Path) -> str:
    """The page's text without its tags, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_the_pages_are_there(site: pathlib.Path) -> None:
    root = site / "html"
    for page in ("index", "getting-started", "guides/own-env", "guides/managers", "architecture", "benchmarks"):
        assert (root / f"{page}.html").is_file(), page
    assert "Sphinx" in text_of(root / "index.html") and "MyST" in text_of(root / "index.html")
    assert "furo" in (root / "index.html").read_text(encoding="utf-8")
    assert "Choosing a manager" in text_of(root / "guides" / "managers.html")
    serve = "python -m sphinx -b html docs docs/_build/html && python -m http.server --directory docs/_build/html 8000"
    assert serve in text_of(root / "index.html")
    ignored = subprocess.run(["git", "check-ignore", "-q", "docs/_build/html/index.html"], cwd=ROOT, check=False)
    assert ignored.returncode == 0  # the built site stays out of the repository
    assert "BatchCore.step_batch" in text_of(root / "architecture.html").split("A step")[1]


def test_the_config_reference_gives_each_key_what_it_accepts(site: pathlib.Path) -> None:
    text = text_of(site / "html" / "generated" / "config_reference.html")
    assert re.search(r"env\.collector_env_num\s+8\s+an int in \[1, 1024\]\s+envs collecting samples", text)
    assert re.search(r"policy\.learn\.learning_rate\s+0\.001\s+a finite number > 0\s+the optimizer.s step size", text)
    for policy in ("dqn", "ppo", "sac", "td3"):
        assert f"policy type {policy}" in text
    assert "manager type subprocess" in text


def test_the_wrapper_catalogue_has_every_registered_wrapper(site: pathlib.Path) -> None:
    page = site / "html" / "generated" / "wrappers.html"
    text = text_of(page)
    ids = set(re.findall(r'<section id="([\w-]+)"', page.read_text(encoding="utf-8")))
    for name in WRAPPER_REGISTRY:
        assert name.replace("_", "-") in ids, name
    try:
        import ale_py  # noqa: F401
    except ImportError:  # the wrappers proven only on ALE games have no example without ale-py
        shown = {case.wrapper for case in shape_cases() if case.env not in ALE_CATALOGUE}
    else:
        shown = set(WRAPPER_REGISTRY)
    for name in shown:  # each with an example the build ran (a shape-proof case of it)
        assert f"update_space(obs, act, rew, [({name!r}, " in text, name
    frame_stack = text.split("update_space(obs, act, rew, [('frame_stack', {})])", 1)[1]
    assert frame_stack.split()[:5] == ["after", ":", "observation", "Box(-10.0,", "10.0,"]
    assert "(4, 5), float32)" in frame_stack.split("action")[0]  # (5,) stacked 4 times, computed by the build


def plain(text: str) -> str:
    """``text`` with its runs of whitespace made one space (table cells wrap)."""
    return " ".join(text.split())


def test_the_cli_reference_has_every_mode_and_option_with_its_help(site: pathlib.Path) -> None:
    text = plain(text_of(site / "html" / "generated" / "cli.html"))
    for mode, meaning in MODES.items():
        assert plain(f"-m {mode} {meaning}") in text, mode  # hyphens and quotes as written, not made typographic
    parser = build_parser()
    for action in parser._actions:
        names = action.option_strings or [action.dest]
        assert all(name in text for name in names), names
        assert plain(action.help or "") in text, names
    assert "ding -m spec -c dizoo/classic_control/cartpole/config/cartpole_dqn_config.py" in text  # the examples
    assert plain(parser.format_usage()) in text
    index = text_of(site / "html" / "index.html")
    assert "Command line" in index and "Errors" in index


def test_the_errors_page_has_every_error_class_with_its_bases(site: pathlib.Path) -> None:
    text = plain(text_of(site / "html" / "generated" / "errors.html")).replace("\u2019", "'")  # docstrings are reST
    classes = [
        value
        for name, value in vars(ding.errors).items()
        if not name.startswith("_") and inspect.isclass(value) and issubclass(value, BaseException)
    ]
    assert len(classes) > 10
    for cls in classes:
        bases = ", ".join(base.__name__ for base in cls.__bases__)
        assert f"ding.errors.{cls.__name__} (bases: {bases})" in text, cls
        meaning = (inspect.getdoc(cls) or "").split("\n\n")[0]
        shown = re.sub(r":\w+:`~?([^`]+)`", r"\1", meaning).replace("``", "")  # as the roles render
        assert plain(shown) in text, cls


def test_the_api_reference_documents_the_public_packages(site: pathlib.Path) -> None:
    api = site / "html" / "generated" / "api"
    assert "update_space" in text_of(api / "ding.envs.env_wrappers.html")
    assert "compile_config" in text_of(api / "ding.config.html")
    assert "SubprocessEnvManager" in text_of(api / "ding.envs.env_manager.html")
    assert "DQNPolicy" in text_of(api / "ding.policy.html")  # the registered policies, from their modules


def test_the_examples_in_the_pages_run(site: pathlib.Path) -> None:
    ran = sphinx("doctest", site / "doctest", site / "doctrees")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = (site / "doctest" / "output.txt").read_text(encoding="utf-8")
    assert re.search(r"[1-9]\d* tests\s+0 failures in tests", summary), summary
