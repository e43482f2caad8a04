"""Headless OpenGL for MuJoCo rendering: pick a ``MUJOCO_GL`` backend before mujoco or dm_control is imported.

MuJoCo reads ``MUJOCO_GL`` when its rendering modules load. Without a display, EGL (hardware or software) is the
fast choice and OSMesa the slow fallback; ``scripts/mujoco_gl.sh`` probes which one really renders here.
"""

from __future__ import annotations

import ctypes.util
import os


def use_headless_gl() -> str:
    """Set ``MUJOCO_GL`` unless it is already set, and return the backend in force.

    ``egl`` is chosen when libEGL is installed, else ``osmesa`` when libOSMesa is, else ``egl`` anyway (rendering
    then fails with MuJoCo's own message, while physics-only use still works). A value the user set is kept.

    Headless rendering in software goes through Mesa's llvmpipe, which by default rasterizes on threads of its
    own. A process forked after it rendered inherits llvmpipe's state but not those threads, and its first render
    waits for them forever (an env worker forked from a process that rendered would hang). ``LP_NUM_THREADS=0``
    (set here unless the user set it) makes llvmpipe rasterize on the calling thread, so forked workers render;
    env workers already run in parallel, and frames of RL size lose nothing by it.

    Example:
        >>> use_headless_gl() == os.environ['MUJOCO_GL']
        True
    """
    chosen = os.environ.get("MUJOCO_GL")
    if chosen != "glfw":
        os.environ.setdefault("LP_NUM_THREADS", "0")
    if chosen:
        return chosen
    if ctypes.util.find_library("EGL") is None and ctypes.util.find_library("OSMesa") is not None:
        chosen = "osmesa"
    else:
        chosen = "egl"
    os.environ["MUJOCO_GL"] = chosen
    if chosen != "glfw":
        # PyOpenGL picks its platform from this variable; it must agree with MuJoCo's context.
        os.environ.setdefault("PYOPENGL_PLATFORM", chosen)
    return chosen
