"""What ding knows about ALE games without running one: the game behind an env id and its action count.

The number of actions of a game is the size of ALE's *minimal action set* (the joystick moves the
game reacts to), which ALE only reports once the ROM is loaded. ``MINIMAL_ACTION_COUNTS`` states it
for every game ale-py 0.12 registers (``tests/dizoo/test_atari.py`` checks the table against the
ROMs); a game missing from it falls back to :func:`read_minimal_action_count`, which loads the ROM
into a bare ``ALEInterface`` without emulating a frame (about 0.1 s, once per game and process).
"""

from __future__ import annotations

import functools
import re
import warnings

import ale_py
import gymnasium as gym
from ale_py import roms

from ding.errors import ConfigError, did_you_mean

gym.register_envs(ale_py)
# ale-py's envs set this (process-wide) mode right after building their ALEInterface; setting it first
# also silences the banner each new emulator would print.
ale_py.ALEInterface.setLoggerMode(ale_py.LoggerMode.Error)

ALE_ENTRY_POINT = "ale_py.env:AtariEnv"
SCREEN_HEIGHT, SCREEN_WIDTH = 210, 160
RAM_SIZE = 128

# fmt: off
MINIMAL_ACTION_COUNTS: dict[str, int] = {
    "adventure": 18, "air_raid": 6, "alien": 18, "amidar": 10, "assault": 7, "asterix": 9, "asteroids": 14,
    "atlantis": 4, "atlantis2": 4, "backgammon": 3, "bank_heist": 18, "basic_math": 6, "battle_zone": 18,
    "beam_rider": 9, "berzerk": 18, "blackjack": 4, "bowling": 6, "boxing": 18, "breakout": 4, "carnival": 6,
    "casino": 4, "centipede": 18, "chopper_command": 18, "crazy_climber": 9, "crossbow": 18, "darkchambers": 18,
    "defender": 18, "demon_attack": 6, "donkey_kong": 18, "double_dunk": 18, "earthworld": 18, "elevator_action": 18,
    "enduro": 9, "entombed": 18, "et": 18, "fishing_derby": 18, "flag_capture": 18, "freeway": 3, "frogger": 5,
    "frostbite": 18, "galaxian": 6, "gopher": 8, "gravitar": 18, "hangman": 18, "haunted_house": 18, "hero": 18,
    "human_cannonball": 18, "ice_hockey": 18, "jamesbond": 18, "journey_escape": 16, "kaboom": 4, "kangaroo": 18,
    "keystone_kapers": 14, "king_kong": 6, "klax": 18, "koolaid": 9, "krull": 18, "kung_fu_master": 14,
    "laser_gates": 18, "lost_luggage": 9, "mario_bros": 18, "miniature_golf": 18, "montezuma_revenge": 18, "mr_do": 10,
    "ms_pacman": 9, "name_this_game": 6, "othello": 10, "pacman": 5, "phoenix": 8, "pitfall": 18, "pitfall2": 18,
    "pong": 6, "pooyan": 6, "private_eye": 18, "qbert": 6, "riverraid": 18, "road_runner": 18, "robotank": 18,
    "seaquest": 18, "sir_lancelot": 6, "skiing": 3, "solaris": 18, "space_invaders": 6, "space_war": 18,
    "star_gunner": 18, "superman": 18, "surround": 5, "tennis": 18, "tetris": 5, "tic_tac_toe_3d": 10,
    "time_pilot": 10, "trondead": 18, "turmoil": 12, "tutankham": 8, "up_n_down": 6, "venture": 18,
    "video_checkers": 5, "video_chess": 10, "video_cube": 18, "video_pinball": 9, "wizard_of_wor": 10,
    "word_zapper": 18, "yars_revenge": 18, "zaxxon": 18,
}
# fmt: on
"""Size of ALE's minimal action set per game (ROM id), as ale-py 0.12.1 reports it."""


_OLD_GYM_ID = re.compile(r"^(?P<name>[A-Za-z0-9]+?)Deterministic-v[04]$")


@functools.cache
def ale_env_ids() -> tuple[str, ...]:
    """Every gymnasium id that names an ALE game (``ALE/Pong-v5``, ``PongNoFrameskip-v4``, ``Pong-ram-v4``, ...)."""
    return tuple(sorted(env_id for env_id, spec in gym.registry.items() if spec.entry_point == ALE_ENTRY_POINT))


def registered_ale_id(env_id: str) -> str:
    """The gymnasium id to make for ``env_id``, checked to name an ALE game.

    Old gym's ``<Game>Deterministic-v4`` ids (DI-engine's configs use them; ale-py no longer registers them)
    name their game unambiguously, and frame skipping and sticky actions are this suite's config keys, not the
    id's; they map to ``<Game>NoFrameskip-v4``. Any other id must be registered and be an ALE game, or the
    error lists the supported ids (``ALE/<Game>-v5`` for every game) with a close match.

    >>> registered_ale_id('MontezumaRevengeDeterministic-v4')
    'MontezumaRevengeNoFrameskip-v4'
    >>> registered_ale_id('ALE/Pong-v5')
    'ALE/Pong-v5'
    """
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str such as 'ALE/Pong-v5', got {env_id!r} ({type(env_id).__name__})")
    old = _OLD_GYM_ID.match(env_id)
    if env_id not in gym.registry and old is not None:
        env_id = f"{old['name']}NoFrameskip-v4"
    spec = gym.registry.get(env_id)
    if spec is None or spec.entry_point != ALE_ENTRY_POINT:
        known = ale_env_ids()
        games = [env for env in known if env.startswith("ALE/") and env.endswith("-v5")]
        what = "not a registered env id"
        if spec is not None:
            what = f"not an ALE game (its entry point is {spec.entry_point!r})"
        raise ConfigError(
            f"atari: env_id {env_id!r} is {what}; supported: any ALE game id, such as "
            f"{', '.join(games)} (or their <Game>NoFrameskip-v4 forms).{did_you_mean(env_id, known)}"
        )
    return env_id


def game_of(env_id: str) -> str:
    """The ALE game (ROM id) an env id names: ``'ALE/Pong-v5'`` and ``'PongNoFrameskip-v4'`` both name ``'pong'``.

    Reads gymnasium's registry only; no emulator is built.

    >>> game_of('ALE/SpaceInvaders-v5'), game_of('BreakoutNoFrameskip-v4')
    ('space_invaders', 'breakout')
    """
    return str(gym.spec(registered_ale_id(env_id)).kwargs["game"])


def minimal_action_count(game: str) -> int:
    """The number of actions of ``game``: from the static table, else read from its ROM.

    >>> minimal_action_count('breakout')
    4
    """
    count = MINIMAL_ACTION_COUNTS.get(game)
    return count if count is not None else read_minimal_action_count(game)


@functools.cache
def read_minimal_action_count(game: str) -> int:
    """Load ``game``'s ROM into a bare ``ALEInterface`` (no frame is emulated) and count its minimal action set."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ale-py warns before returning None for an unknown ROM
        path = roms.get_rom_path(game)
    if path is None:
        raise ConfigError(f"ale-py has no ROM for the game {game!r}; known games: see ale_py.roms.get_all_rom_ids()")
    ale = ale_py.ALEInterface()
    ale.setLoggerMode(ale_py.LoggerMode.Error)
    ale.loadROM(path)
    return len(ale.getMinimalActionSet())
