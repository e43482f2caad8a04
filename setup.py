"""Packaging for ding and dizoo."""

import pathlib

from setuptools import find_packages, setup

EXTRAS = {
    "atari": ["ale-py>=0.9"],
    "classic_control": ["pygame>=2.1"],
    "mujoco": ["mujoco>=3.1,<4", "dm-control>=1.0.16", "imageio>=2.14.1"],
    "box2d": ["box2d>=2.3.10", "imageio>=2.14.1"],
    "carla": ["carla>=0.9.13"],
    "ray": ["ray>=2.9"],
    "sb3": ["stable-baselines3>=2.9"],  # torch, which it needs, comes pinned through constraints.txt
    # envpool's C++ pools behind the manager API; 1.2.5 is its last release with a wheel for Python 3.11
    "envpool": ["envpool==1.2.5"],
    # PettingZoo parallel envs; the MPE suite (simple_spread, ...) lives in mpe2 since PettingZoo 1.25
    "pettingzoo": ["pettingzoo>=1.24", "mpe2>=1.0"],
    "torch": ["torch>=2.1", "tensorboard>=2.14"],
    # gym 0.26.2 (unmaintained, fine with numpy 2 when its env checker is off) for the old-gym-API tests
    "test": ["pytest>=8", "pytest-timeout>=2.3", "ruff>=0.6", "mypy>=1.10", "hypothesis>=6.100", "gym==0.26.2"],
}
EXTRAS["dmc"] = EXTRAS["mujoco"]
EXTRAS["all"] = sorted(
    {req for name, reqs in EXTRAS.items() if name not in ("test", "carla", "ray", "sb3", "envpool") for req in reqs}
)

setup(
    name="ding",
    version="0.1.0",
    description="Gym-style RL env wrappers with static shape declarations, and env managers that run them.",
    long_description=pathlib.Path(__file__).with_name("README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=find_packages(include=["ding", "ding.*", "dizoo", "dizoo.*"]),
    install_requires=[
        "numpy>=1.24",
        "gymnasium>=1.0",
        "easydict>=1.10",
        "cloudpickle>=2.0",
        "pyzmq>=25",
        "opencv-python-headless>=4.8",
    ],
    extras_require=EXTRAS,
    entry_points={"console_scripts": ["ding=ding.entry.cli:main"]},
    classifiers=["Programming Language :: Python :: 3", "Topic :: Scientific/Engineering :: Artificial Intelligence"],
)
