"""The ``ding`` command line: it parses arguments and calls library functions, nothing more."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ding.config import read_config
from ding.errors import DingError

MODES = {
    "spec": "print the env's wrapper chain with each step's spaces and bytes per step, from the config alone",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ding",
        description="Run a ding config. Modes:\n" + "\n".join(f"  {name:8s} {text}" for name, text in MODES.items()),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-m", "--mode", required=True, choices=sorted(MODES), help="what to do with the config")
    parser.add_argument(
        "-c", "--config", required=True, help="path of a Python config file (main_config, create_config)"
    )
    parser.add_argument(
        "-s", "--seed", type=int, action="append", help="random seed; repeat the flag for one run per seed (default 0)"
    )
    parser.add_argument("--exp-name", help="experiment name (default: the config's exp_name)")
    return parser


def run_spec(config_path: str) -> str:
    from ding.entry.spec import format_spec_table, spec_trace_from_config

    main_config, create_config = read_config(config_path)
    return format_spec_table(spec_trace_from_config(main_config, create_config))


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.mode == "spec":
            print(run_spec(args.config))
    except (DingError, OSError) as err:
        parser.exit(2, f"ding: error: {err}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
