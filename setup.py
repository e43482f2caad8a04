"""Packaging for ding and dizoo."""

from __future__ import annotations

import pathlib

from setuptools import find_packages, setup
from setuptools.command.bdist_wheel import bdist_wheel

EXTRAS = {
    "atari": ["ale-py>=0.9"],
    "classic_control": ["pygame>=2.1"],
    "mujoco": ["mujoco>=3.1,<4", "dm-control>=1.0.16", "imageio>=2.14.1"],
    "box2d": ["box2d>=2.3.10", "imageio>=2.14.1"],
    "carla": ["carla>=0.9.13"],
    "ray": ["ray>=2.9"],
    "sb3": ["stable-baselines3>=2.9"],
    # envpool's C++ pools behind the manager API; 1.2.5 is its last release with a wheel for Python 3.11
    "envpool": ["envpool==1.2.5"],
    # PettingZoo parallel envs; the MPE suite (simple_spread, ...) lives in mpe2 since PettingZoo 1.25
    "pettingzoo": ["pettingzoo>=1.24", "mpe2>=1.0"],
    # tensorboard's event files beside the text log (torch itself is a dependency of every install; the extra keeps
    # its old name too)
    "tensorboard": ["tensorboard>=2.14"],
    # gym 0.26.2 (unmaintained, fine with numpy 2 when its env checker is off) for the old-gym-API tests; imageio with
    # PyAV reads the videos back
    "test": [
        "pytest>=8",
        "pytest-timeout>=2.3",
        "ruff>=0.6",
        "mypy>=1.10",
        "hypothesis>=6.100",
        "gym==0.26.2",
        "imageio[pyav]>=2.31",
    ],
    # the documentation site (docs/): Sphinx with the Furo theme, MyST markdown pages, type hints in autodoc
    "docs": ["sphinx>=8", "furo>=2024.8", "myst-parser>=4", "sphinx-autodoc-typehints>=2"],
}
EXTRAS["dmc"] = EXTRAS["mujoco"]
EXTRAS["torch"] = EXTRAS["tensorboard"]
EXTRAS["all"] = sorted(
    {
        req
        for name, reqs in EXTRAS.items()
        if name not in ("test", "docs", "carla", "ray", "sb3", "envpool")
        for req in reqs
    }
)


class WheelWithBothExtraSpellings(bdist_wheel):
    """A wheel whose metadata names each extra with an underscore under both spellings.

    setuptools writes extra names normalized (``classic-control``, PEP 685). pip before 23.3 (the pip a new Python
    3.11 venv carries) compares a requested extra with those names as written, so ``ding[classic_control]`` would
    install none of the extra's packages; the metadata also lists each such extra as written in :data:`EXTRAS`, so
    both ``ding[classic_control]`` and ``ding[classic-control]`` resolve on every pip. ``dist_info`` (the metadata
    pip reads before building) goes through the same method.
    """

    def egg2dist(self, egginfo_path: str, distinfo_path: str) -> None:
        super().egg2dist(egginfo_path, distinfo_path)
        metadata = pathlib.Path(distinfo_path) / "METADATA"
        headers, separator, body = metadata.read_text(encoding="utf-8").partition("\n\n")
        metadata.write_text(headers + "".join(underscore_spellings()) + separator + body, encoding="utf-8")


def underscore_spellings() -> list[str]:
    """Metadata lines naming every extra with an underscore as written, and its requirements under that name."""
    lines = []
    for name, requirements in EXTRAS.items():
        if "_" in name:
            lines.append(f"\nProvides-Extra: {name}")
            lines += [f'\nRequires-Dist: {requirement}; extra == "{name}"' for requirement in requirements]
    return lines


README = pathlib.Path(__file__).with_name("README.md").read_text(encoding="utf-8")

setup(
    name="ding",
    version="0.1.0",
    description="Gym-style RL env wrappers with static shape declarations, and env managers that run them.",
    long_description=README,
    long_description_content_type="text/markdown",
    license="Apache-2.0",
    license_files=["LICENSE"],
    python_requires=">=3.10",
    packages=find_packages(include=["ding", "ding.*", "dizoo", "dizoo.*"]),
    package_data={"ding": ["py.typed"], "dizoo": ["README.md"]},
    install_requires=[
        "numpy>=1.24",
        "gymnasium>=1.0",
        "easydict>=1.10",
        "cloudpickle>=2.0",
        "pyzmq>=25",
        "opencv-python-headless>=4.8",
        # the serial pipeline's models and policies; install with the project's constraints file (or pick the
        # CPU or CUDA build from PyTorch's index) to choose which build comes
        "torch>=2.1",
        # evaluation videos as H.264 mp4 files
        "av>=12",
    ],
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["ding=ding.entry.cli:main"]},
    cmdclass={"bdist_wheel": WheelWithBothExtraSpellings},
    project_urls={
        "DI-engine (the API ding follows)": "https://github.com/opendilab/DI-engine",
        "Gymnasium": "https://gymnasium.farama.org",
    },
    classifiers=[
        "Programming Language :: Python :: 3",
        "Topic :: Scientific/Engineering :: Artificial Intelligence",
        "Typing :: Typed",
    ],
)
