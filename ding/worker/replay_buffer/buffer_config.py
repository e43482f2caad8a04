"""DI-engine's replay-buffer configs read into ding's terms (compatibility): a buffer's declared keys merged strictly,
each value held to what ding accepts, and DI-engine's logging keys dropped with one line.

A key ding honours only at one value is declared :func:`~ding.utils.accepts.fixed` with the reason; the keys that
only set how often DI-engine's buffer logs its throughput (:data:`LOGGING_KEYS`) change nothing in ding: given, they
are dropped and named in one warning line.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from easydict import EasyDict

from ding.config.di_engine.policy_keys import report_ignored
from ding.utils.accepts import check_values, plain_defaults
from ding.utils.merge import deep_merge_dicts

LOGGING_KEYS: dict[str, tuple[str, ...]] = {
    "periodic_thruput_seconds": (),
    "monitor": (),
    "window_seconds": ("thruput_controller",),
}
"""DI-engine's buffer keys that set its throughput and sample logs (and the section each is in): ding's buffers log
neither."""

NO_DEEPCOPY = "ding stores the objects pushed, as DI-engine does with deepcopy=False"
NO_TRACKING = "ding keeps no record of which samples were used"


def buffer_config(declared: Mapping[str, Any], cfg: Mapping[str, Any] | None, path: str) -> EasyDict:
    """``cfg`` merged over ``declared``'s defaults (unknown keys refused with a close match), held to what each key
    accepts, after DI-engine's logging keys are dropped with one line.

    >>> buffer_config({'replay_buffer_size': 10}, {'replay_buffer_size': 4, 'periodic_thruput_seconds': 60}, 'b')
    {'replay_buffer_size': 4}
    """
    user = dict(cfg or {})
    dropped: list[str] = []
    for key, sections in LOGGING_KEYS.items():
        holder: dict[str, Any] = user
        for section in sections:
            inner = holder.get(section)
            if not isinstance(inner, Mapping):
                break
            holder[section] = holder = dict(inner)
        else:
            if key in holder:
                dropped.append(f"{'.'.join((path, *sections, key))}={holder.pop(key)!r}")
    report_ignored(dropped)
    merged = deep_merge_dicts(EasyDict(plain_defaults(declared)), user, strict=True, path=path)
    check_values(declared, merged, path)
    return merged
