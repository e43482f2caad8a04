"""The ``ding`` command line: it parses arguments and calls library functions, nothing more."""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

from ding.config import read_config
from ding.errors import DingError

MODES = {
    "spec": "print the env's wrapper chain with each step's spaces and bytes per step, from the config alone",
    "serial": "train and evaluate the config's policy on its env (one run per --seed); writes the experiment "
    "directory <exp_name>_seed<seed>/ with total_config.py, ckpt/ and log/; --load-path CKPT resumes from a "
    "checkpoint",
    "serial_onpolicy": "as serial, for on-policy policies (PPO): each iteration collects policy.collect.n_sample "
    "fresh env steps and learns from them for policy.learn.epoch_per_collect epochs",
    "eval": "evaluate the checkpoint --load-path on the config's evaluator envs and print the mean return",
    "worker": "run a zmq env worker for the manager at --connect tcp://HOST:PORT with the keys in --keys DIR "
    "(no -c); it exits when the manager closes it or goes silent",
    "keygen": "create CURVE keys for zmq env managers and workers in DIR (ding -m keygen DIR [--name NAME]; no -c)",
}

EPILOG = """examples:
  ding -m spec -c dizoo/classic_control/cartpole/config/cartpole_dqn_config.py
  ding -m serial -c dizoo/classic_control/cartpole/config/cartpole_dqn_config.py -s 0 -s 1
  ding -m serial -c cfg.py --exp-name smoke --env-step 200
  ding -m serial -c cfg.py --exp-name more --env-step 5000 --load-path smoke/ckpt/iteration_100.pth.tar
  ding -m serial_onpolicy -c dizoo/classic_control/cartpole/config/cartpole_ppo_config.py -s 0
  ding -m eval -c cfg.py --load-path cartpole_dqn_seed0/ckpt/ckpt_best.pth.tar
  ding -m keygen ~/ding-keys
  ding -m worker --connect tcp://10.0.0.5:5555 --keys ~/ding-keys

During -m serial and -m serial_onpolicy a status line on stderr shows env steps, episodes, train iterations
and the last eval return (redrawn in place on a terminal, otherwise printed every few seconds).
Ctrl-C during -m serial or -m serial_onpolicy saves ckpt/iteration_<N>.pth.tar, closes the envs and exits
with status 130; --load-path with that file resumes the run."""

INTERRUPTED = 130
TRAINING_MODES = ("serial", "serial_onpolicy")
ZMQ_MODES = ("worker", "keygen")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ding",
        description="Run a ding config. Modes:\n" + "\n".join(f"  {name:15s} {text}" for name, text in MODES.items()),
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("-m", "--mode", required=True, choices=sorted(MODES), help="what to do with the config")
    parser.add_argument(
        "-c", "--config", help="path of a Python config file (main_config, create_config); not for worker, keygen"
    )
    parser.add_argument("directory", nargs="?", help="keygen: the directory to write keys to")
    parser.add_argument("--connect", metavar="URL", help="worker: the manager's endpoint, tcp://HOST:PORT")
    parser.add_argument("--keys", metavar="DIR", help="worker: the key directory made by -m keygen")
    parser.add_argument("--name", help="worker, keygen: the worker key's name (default: worker)")
    parser.add_argument(
        "--manager-timeout",
        type=float,
        metavar="S",
        help="worker: exit after S s without a word from the manager (default: the manager's heartbeat_timeout)",
    )
    parser.add_argument(
        "-s",
        "--seed",
        type=int,
        action="append",
        help="random seed; serial, serial_onpolicy: repeat the flag for one run per seed (default 0); "
        "eval: default the config's seed",
    )
    parser.add_argument(
        "--exp-name",
        help="experiment directory (serial, serial_onpolicy; default: the config's exp_name with _seed<seed>); "
        "with several seeds each run gets <exp-name>_seed<seed>",
    )
    parser.add_argument(
        "--env-step", type=int, metavar="N", help="serial, serial_onpolicy: stop after N collected env steps"
    )
    parser.add_argument(
        "--train-iter", type=int, metavar="N", help="serial, serial_onpolicy: stop after N training iterations"
    )
    parser.add_argument(
        "--load-path",
        metavar="CKPT",
        help="eval: the checkpoint file to evaluate (required); serial, serial_onpolicy: resume from this "
        "checkpoint (model, optimizer, train iteration and env step counters; --env-step and --train-iter "
        "count from the start of the first run)",
    )
    return parser


def run_spec(config_path: str) -> str:
    from ding.entry.spec import format_spec_table, spec_trace_from_config

    main_config, create_config = read_config(config_path)
    return format_spec_table(spec_trace_from_config(main_config, create_config))


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Reject options the chosen mode does not use (argparse's one-line error, exit status 2)."""
    used_by = {
        "env_step": TRAINING_MODES,
        "train_iter": TRAINING_MODES,
        "exp_name": TRAINING_MODES,
        "load_path": (*TRAINING_MODES, "eval"),
        "connect": ("worker",),
        "keys": ("worker",),
        "manager_timeout": ("worker",),
        "name": ZMQ_MODES,
        "directory": ("keygen",),
    }
    for option, modes in used_by.items():
        if getattr(args, option) is not None and args.mode not in modes:
            flag = "--" + option.replace("_", "-")
            parser.error(f"{flag} is not used by -m {args.mode} (only by -m {', -m '.join(modes)})")
    if args.mode in ZMQ_MODES and args.config is not None:
        parser.error(f"-c is not used by -m {args.mode}")
    if args.mode not in ZMQ_MODES and args.config is None:
        parser.error(f"-m {args.mode} needs -c CONFIG")
    if args.mode == "worker" and (args.connect is None or args.keys is None):
        parser.error("-m worker needs --connect tcp://HOST:PORT and --keys DIR")
    if args.mode == "keygen" and args.directory is None:
        parser.error("-m keygen needs DIR, the directory to write the keys to")
    if args.mode == "eval" and args.load_path is None:
        parser.error("-m eval needs --load-path CKPT, the checkpoint to evaluate")
    for option in ("env_step", "train_iter"):
        value = getattr(args, option)
        if value is not None and value < 1:
            parser.error(f"--{option.replace('_', '-')} must be >= 1, got {value}")
    if args.mode == "eval" and args.seed is not None and len(args.seed) > 1:
        parser.error("-m eval takes one --seed")


def run_serial(args: argparse.Namespace) -> int:
    from ding.entry.serial_entry import serial_pipeline
    from ding.entry.serial_entry_onpolicy import serial_pipeline_onpolicy

    pipeline = serial_pipeline_onpolicy if args.mode == "serial_onpolicy" else serial_pipeline

    seeds = args.seed or [0]
    for seed in seeds:
        exp_name = args.exp_name
        if exp_name is not None and len(seeds) > 1:
            exp_name = f"{exp_name}_seed{seed}"
        result = pipeline(
            args.config,
            seed=seed,
            max_train_iter=args.train_iter,
            max_env_step=args.env_step,
            exp_name=exp_name,
            load_path=args.load_path,
        )
        print(result.summary(), flush=True)
        if result.interrupted:
            return INTERRUPTED
    return 0


def run_eval(args: argparse.Namespace) -> str:
    from ding.entry.eval_entry import eval_checkpoint

    result = eval_checkpoint(args.config, args.load_path, seed=args.seed[0] if args.seed else None)
    stop = ""
    if result.stop_value is not None:
        stop = f"; stop_value {result.stop_value} {'reached' if result.stop else 'not reached'}"
    return (
        f"eval return mean {result.mean:.2f} (std {result.std:.2f}, min {result.min:.2f}, max {result.max:.2f}) "
        f"over {len(result.returns)} episodes{stop}"
    )


class _LineHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """A stderr handler that first clears a status line drawn in place on a terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.stream.isatty():
                self.stream.write("\r\x1b[K")
        except (AttributeError, ValueError, OSError):
            pass
        super().emit(record)


@contextlib.contextmanager
def _progress_on_stderr() -> Iterator[None]:
    """Show a training run's progress lines (the library logs them to ``ding.serial``) on stderr."""
    logger = logging.getLogger("ding.serial")
    handler = _LineHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    status = 0
    try:
        if args.mode == "spec":
            print(run_spec(args.config))
        elif args.mode in TRAINING_MODES:
            with _progress_on_stderr():
                status = run_serial(args)
        elif args.mode == "eval":
            print(run_eval(args))
        elif args.mode == "keygen":
            from ding.entry.env_worker import run_keygen

            print(run_keygen(args.directory, args.name or "worker"))
        elif args.mode == "worker":
            from ding.entry.env_worker import run_worker

            status = run_worker(args.connect, args.keys, args.name or "worker", args.manager_timeout)
    except (DingError, OSError) as err:
        message = " ".join(str(err).split("\n--- original traceback ---")[0].split())
        parser.exit(2, f"ding: error: {message}\n")
    except KeyboardInterrupt:
        parser.exit(INTERRUPTED, "ding: interrupted\n")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
