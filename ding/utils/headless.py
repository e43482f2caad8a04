"""Rendering without a display: what SDL (pygame) needs to draw frames on a machine with no screen."""

from __future__ import annotations

import os


def use_headless_sdl() -> str | None:
    """On a machine without an X or Wayland display, let SDL draw off-screen (``SDL_VIDEODRIVER=dummy``, unless the
    variable is set already); return the driver in force (None: SDL picks one).

    gymnasium's classic-control and Box2D envs draw their ``rgb_array`` frames with pygame. Without a display SDL
    would probe for one and print ``XDG_RUNTIME_DIR is invalid or not set`` before drawing off-screen anyway; the
    dummy driver draws the same frames without the probe.

    >>> driver = use_headless_sdl()
    >>> driver == os.environ.get('SDL_VIDEODRIVER')
    True
    """
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
    return os.environ.get("SDL_VIDEODRIVER")
