from __future__ import annotations

import math
import pathlib
import sys
from typing import Any

import numpy as np
import pytest
from easydict import EasyDict

from ding.config import read_config, read_config_directly, read_config_with_system, save_config
from ding.errors import ConfigError

ROOT = pathlib.Path(__file__).resolve().parents[2]


def awkward_config() -> dict[str, Any]:
    return {
        "exp_name": 'it\'s a "quoted" name\\with\nnewline and ünïcode',
        "seed": -3,
        "env": {
            "stop_value": float("inf"),
            "low": -float("inf"),
            "ratio": 0.1,
            "tiny": 1e-300,
            "flags": [True, False, None],
            "shape": (4, 84, 84),
            "single": (7,),
            "empty_tuple": (),
            "empty_list": [],
            "empty_dict": {},
            "nested_tuple": ((1, 2), [3, (4,)]),
            "env_kwargs": {"CartPole-v1": 1, "class": "keyword key", "2x": [1.5]},
            "wrappers": [{"type": "frame_stack", "kwargs": {"n_frames": 4}}, ("warp_frame", {"size": 84})],
            "long_list": list(range(60)),
        },
        "policy": {"model": {"encoder_hidden_size_list": [128, 128, 64]}},
    }


def write(tmp_path: pathlib.Path, text: str, name: str = "my_config.py") -> pathlib.Path:
    file = tmp_path / name
    file.write_text(text)
    return file


def test_round_trip_gives_back_equal_configs_with_types_kept(tmp_path: pathlib.Path) -> None:
    main, create = awkward_config(), {"env": {"type": "cartpole", "import_names": ["a.b"]}, "policy": {"type": "dqn"}}
    file = save_config(main, create, tmp_path / "exp" / "total_config.py")
    loaded_main, loaded_create = read_config(file)
    assert isinstance(loaded_main, EasyDict) and isinstance(loaded_create, EasyDict)
    assert loaded_main == main and loaded_create == create
    assert loaded_main.env.stop_value == math.inf and loaded_main.env.low == -math.inf
    assert type(loaded_main.env.shape) is tuple and type(loaded_main.env.single) is tuple
    assert type(loaded_main.env.nested_tuple[1][1]) is tuple and type(loaded_main.env.empty_tuple) is tuple
    assert type(loaded_main.env.flags) is list


def test_saved_file_is_readable_python_in_the_total_config_layout(tmp_path: pathlib.Path) -> None:
    file = save_config(awkward_config(), {"env": {"type": "cartpole"}}, tmp_path / "total_config.py")
    text = file.read_text()
    assert "\nmain_config = dict(\n    exp_name=" in text
    assert "\ncreate_config = dict(env=dict(type='cartpole'))\n" in text
    assert "stop_value=float('inf')," in text and "low=-float('inf')," in text
    assert "env_kwargs={'CartPole-v1': 1, 'class': 'keyword key', '2x': [1.5]}," in text
    assert max(len(line) for line in text.splitlines()) <= 120


def test_nan_is_written_and_read_back(tmp_path: pathlib.Path) -> None:
    loaded, _ = read_config(save_config({"x": float("nan"), "y": [float("nan")]}, {}, tmp_path / "c.py"))
    assert math.isnan(loaded.x) and math.isnan(loaded.y[0])


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": {1, 2}}, r"main_config\.env\.a: set"),
        ({"a": [1, np.float64(0.5)]}, r"main_config\.env\.a\[1\]: float64"),
        ({"a": np.int64(3)}, r"main_config\.env\.a: int64"),
        ({"a": object()}, r"main_config\.env\.a: object"),
        ({"a": {1: "int key"}}, r"main_config\.env\.a: key 1 is not a str"),
    ],
)
def test_values_that_cannot_be_written_faithfully_raise_type_error_naming_the_key_path(
    tmp_path: pathlib.Path, value: dict[str, Any], path: str
) -> None:
    with pytest.raises(TypeError, match=path):
        save_config({"env": value}, {}, tmp_path / "c.py")
    assert not (tmp_path / "c.py").exists()


def test_a_config_that_contains_itself_is_rejected(tmp_path: pathlib.Path) -> None:
    loop: list[Any] = [1]
    loop.append(loop)
    with pytest.raises(TypeError, match=r"main_config\.loop\[1\]: it contains itself"):
        save_config({"loop": loop}, {}, tmp_path / "c.py")


def test_read_config_of_a_dizoo_file() -> None:
    main, create = read_config(ROOT / "dizoo/classic_control/cartpole/config/cartpole_dqn_config.py")
    assert main.exp_name == "cartpole_dqn_seed0" and create.env.type == "cartpole"


def test_read_config_resolves_relative_paths_against_the_cwd(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, "main_config = dict(seed=5)\ncreate_config = dict()\n")
    monkeypatch.chdir(tmp_path)
    assert read_config("my_config.py")[0].seed == 5


def test_read_config_loads_a_fresh_module_each_time_and_leaves_no_trace(tmp_path: pathlib.Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = write(tmp_path / "a", "main_config = dict(seed=1)\ncreate_config = dict()\n")
    second = write(tmp_path / "b", "main_config = dict(seed=2)\ncreate_config = dict()\n")
    modules_before = set(sys.modules)
    assert read_config(first)[0].seed == 1
    assert read_config(second)[0].seed == 2
    first.write_text("main_config = dict(seed=3)\ncreate_config = dict()\n")
    assert read_config(first)[0].seed == 3
    assert set(sys.modules) == modules_before
    assert not (tmp_path / "a" / "__pycache__").exists()


def test_read_config_returns_copies(tmp_path: pathlib.Path) -> None:
    file = write(tmp_path, "shared = dict(n=1)\nmain_config = dict(env=shared)\ncreate_config = dict(env=shared)\n")
    main, create = read_config(file)
    main.env.n = 2
    assert create.env.n == 1


def test_missing_file_is_a_config_error_naming_the_path(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=r"config file .*nowhere_config\.py does not exist"):
        read_config(tmp_path / "nowhere_config.py")
    with pytest.raises(ConfigError, match=r"is not a file"):
        read_config(tmp_path)


def test_a_file_that_raises_is_a_config_error_naming_the_path_the_error_and_the_line(tmp_path: pathlib.Path) -> None:
    file = write(tmp_path, "main_config = dict()\nx = 1 / 0\ncreate_config = dict()\n")
    with pytest.raises(ConfigError, match=r"my_config\.py raised ZeroDivisionError at line 2 while loading: division"):
        read_config(file)
    file = write(tmp_path, "import sys\nsys.exit(3)\n")
    with pytest.raises(ConfigError, match=r"raised SystemExit at line 2"):
        read_config(file)


def test_a_file_with_a_syntax_error_is_a_config_error(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=r"my_config\.py has a syntax error at line 2"):
        read_config(write(tmp_path, "main_config = dict()\ncreate_config = dict(\n"))


def test_a_file_lacking_the_names_is_a_config_error_naming_what_is_missing(tmp_path: pathlib.Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"my_config\.py defines no create_config; a config file must define main_config and create_config",
    ):
        read_config(write(tmp_path, "main_config = dict()\n"))
    with pytest.raises(ConfigError, match=r"defines no main_config and no create_config"):
        read_config(write(tmp_path, "cartpole_dqn_config = dict()\n"))


def test_config_names_must_hold_dicts(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match=r"main_config in config file .*my_config\.py must be a dict, got list"):
        read_config(write(tmp_path, "main_config = [1]\ncreate_config = dict()\n"))


# ----- DI-engine's call forms ----------------------------------------------------------------------
def test_di_engine_save_config_writes_exp_config_and_both_readers_load_it_back_equal(tmp_path: pathlib.Path) -> None:
    config = EasyDict(awkward_config())
    file = save_config(config, str(tmp_path / "total_config.py"))
    names = read_config_directly(file)
    assert set(names) == {"exp_config", "main_config", "create_config"}
    assert names["exp_config"] == config and type(names["exp_config"].env.shape) is tuple
    assert read_config(file) == (config, {})
    assert "exp_config = dict(" in file.read_text() and not (tmp_path / "formatted_total_config.py").exists()


def test_di_engine_save_config_names_the_components_a_compiled_config_records(tmp_path: pathlib.Path) -> None:
    config = {"env": {"type": "cartpole", "import_names": ["m"], "manager": {"type": "base"}}, "policy": {"x": 1}}
    file = save_config(config, tmp_path / "c.py", type_="py", save_formatted=True)
    names = {"env": {"type": "cartpole", "import_names": ["m"]}, "env_manager": {"type": "base"}}
    assert read_config(file) == (config, names)
    formatted = tmp_path / "formatted_c.py"
    assert read_config(formatted) == (config, names)
    assert set(read_config_directly(formatted)) == {"main_config", "create_config"}
    save_config(config, tmp_path / "d.py", "py", True)  # DI-engine's positional form
    assert (tmp_path / "formatted_d.py").is_file()


def test_save_config_forms_are_told_apart_by_the_second_argument(tmp_path: pathlib.Path) -> None:
    ding_file = save_config({"a": 1}, {"env": {"type": "x"}}, tmp_path / "ding.py")
    assert "exp_config" not in ding_file.read_text() and read_config(ding_file) == ({"a": 1}, {"env": {"type": "x"}})
    keyword_file = save_config(main_config={"a": 1}, create_config={}, path=tmp_path / "kw.py")
    assert read_config(keyword_file) == ({"a": 1}, {})
    with pytest.raises(TypeError, match=r"save_config takes \(main_config, create_config, path\) or \(config_, path"):
        save_config({"a": 1}, {})
    with pytest.raises(TypeError, match=r"save_config takes .*unexpected keyword argument 'save_formatted'"):
        save_config({"a": 1}, {}, tmp_path / "x.py", save_formatted=True)


def test_di_engine_yaml_output_is_refused(tmp_path: pathlib.Path) -> None:
    with pytest.raises(ConfigError, match="type_ must be 'py', got 'yaml': ding writes configs as Python files only"):
        save_config({"a": 1}, tmp_path / "c.yaml", type_="yaml")
    assert not (tmp_path / "c.yaml").exists()


def test_read_config_directly_returns_the_data_names_only(tmp_path: pathlib.Path) -> None:
    file = write(
        tmp_path,
        "import math\nfrom easydict import EasyDict\n"
        "def helper():\n    return 1\n"
        "exp_config = EasyDict(dict(lr=0.1, env=dict(size=3)))\nsteps = int(1e3)\nname = 'x'\n_private = 1\n",
    )
    names = read_config_directly(file)
    assert names == {"exp_config": {"lr": 0.1, "env": {"size": 3}}, "steps": 1000, "name": "x"}
    assert isinstance(names["exp_config"], EasyDict)
    with pytest.raises(ConfigError, match="does not exist"):
        read_config_directly(tmp_path / "missing.py")


def test_read_config_with_system_reads_the_third_config(tmp_path: pathlib.Path) -> None:
    file = write(tmp_path, "main_config = {'a': 1}\ncreate_config = {}\nsystem_config = {'path_policy': 'p'}\n")
    assert read_config_with_system(file) == ({"a": 1}, {}, {"path_policy": "p"})
    with pytest.raises(ConfigError, match="defines no system_config; a config file must define main_config and"):
        read_config_with_system(write(tmp_path, "main_config = {}\ncreate_config = {}\n", "two.py"))
