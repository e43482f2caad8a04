"""The ``ding`` command line: it parses arguments and calls library functions, nothing more."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import ding
from ding.config import read_config
from ding.entry.bench_config import DEFAULT_SECONDS, check_seconds
from ding.entry.spec_check import DEFAULT_CHECK_STEPS
from ding.errors import DingError

MODES = {
    "spec": "print the env's wrapper chain with each step's spaces, and the bytes they move, from the config alone; "
    "--check [N] then runs N random env steps in the config's env manager and reports every value that leaves its "
    "predicted space (exit status 1)",
    "serial": "train and evaluate the config's policy on its env (one run per --seed); writes the experiment "
    "directory <exp_name>_seed<seed>/ with total_config.py, ckpt/ and log/ (<exp_name>_seed<seed>_<yymmdd_HHMMSS>/ "
    "when that one holds an earlier run); --load-path CKPT resumes from a checkpoint, in place when it is the "
    "directory's newest",
    "serial_onpolicy": "as serial, for on-policy policies (PPO): each iteration collects policy.collect.n_sample "
    "fresh env steps and learns from them for policy.learn.epoch_per_collect epochs",
    "eval": "evaluate the checkpoint --load-path on the config's evaluator envs: each episode's return and length, "
    "then the mean (--n-episode N episodes, --video [DIR] records them, --output FILE.json|.csv saves them)",
    "bench": "measure the config's collector envs under each env manager configuration that fits them and this "
    "machine (base, thread, subprocess with envs_per_worker and step_in_caller choices, async_subprocess) for about "
    "--seconds S (default 30), print the table and the recommended one; --write NEW.py writes a new config that "
    "reads this one and sets the recommended env.manager",
    "worker": "run a zmq env worker for the manager at --connect tcp://HOST:PORT with the keys in --keys DIR "
    "(no -c); it exits when the manager closes it or goes silent",
    "keygen": "create CURVE keys for zmq env managers and workers in DIR (ding -m keygen DIR [--name NAME]; no -c)",
}

EPILOG = """examples:
  ding -m spec -c dizoo/classic_control/cartpole/config/cartpole_dqn_config.py
  ding -m spec -c my_config.py --check 2000
  ding -m serial -c dizoo/classic_control/cartpole/config/cartpole_dqn_config.py -s 0 -s 1
  ding -m serial -c cfg.py --exp-name smoke --env-step 200
  ding -m serial -c cfg.py --exp-name more --env-step 5000 --load-path smoke/ckpt/iteration_100.pth.tar
  ding -m serial_onpolicy -c dizoo/classic_control/cartpole/config/cartpole_ppo_config.py -s 0
  ding -m eval -c cfg.py --load-path cartpole_dqn_seed0/ckpt/ckpt_best.pth.tar
  ding -m eval -c run/total_config.py --load-path run/ckpt/ckpt_best.pth.tar --n-episode 20 --video --output eval.json
  ding -m serial -c cfg.py --video            # an mp4 of every evaluation episode in <exp_dir>/videos/
  ding -m bench -c cfg.py --seconds 10 --write cfg_tuned.py
  ding -m keygen ~/ding-keys
  ding -m worker --connect tcp://10.0.0.5:5555 --keys ~/ding-keys

During -m serial and -m serial_onpolicy a status line on stderr shows env steps and env steps/s, episodes,
train iterations and the last eval return, with --env-step / --train-iter also the share done and an ETA
(redrawn in place on a terminal, otherwise printed every few seconds); evaluations and checkpoints are logged
there too. Each run prints a summary line; several -s print a table across the seeds at the end.
Ctrl-C (SIGINT) or SIGTERM during -m serial or -m serial_onpolicy saves ckpt/iteration_<N>.pth.tar, closes
the envs and exits with status 130 or 143; --load-path with that file resumes the run."""

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
    parser.add_argument("--version", action="version", version=f"ding {ding.__version__}")
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
        help="worker: exit after S s without a word from the manager, and after S s waiting for a manager to "
        "welcome it (default: the manager's heartbeat_timeout; 60 s for the first welcome)",
    )
    parser.add_argument(
        "--check",
        nargs="?",
        const=DEFAULT_CHECK_STEPS,
        type=int,
        metavar="N",
        help=f"spec: also build the env in the config's manager, take N random steps (default {DEFAULT_CHECK_STEPS}) "
        "and report every observation, reward or action that leaves its predicted space, naming the chain's step; "
        "exit status 1 when one does",
    )
    parser.add_argument(
        "--seconds",
        type=float,
        metavar="S",
        help=f"bench: the time budget of the measurement, start-ups included (default {DEFAULT_SECONDS:g})",
    )
    parser.add_argument(
        "--write",
        metavar="NEW.py",
        help="bench: write a new config file that reads the config and sets the recommended env manager "
        "(refused if the file exists; the config itself is never changed)",
    )
    parser.add_argument(
        "-s",
        "--seed",
        type=int,
        action="append",
        help="random seed; serial, serial_onpolicy: repeat the flag for one run per seed (default 0), then a "
        "table across the seeds is printed; eval: default the config's seed",
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
    parser.add_argument(
        "--video",
        nargs="?",
        const=True,
        metavar="DIR",
        help="serial, serial_onpolicy, eval: record every evaluation episode as DIR/eval_iter<N>_env<i>_ep<k>.mp4 "
        "(default DIR: videos/ in the experiment directory; without the flag: the config's env.replay_path)",
    )
    parser.add_argument(
        "--collector-video",
        metavar="DIR",
        help="serial, serial_onpolicy: also record the collector's episodes, as DIR/env<i>/replay-episode-<n>.mp4",
    )
    parser.add_argument(
        "--n-episode", type=int, metavar="N", help="eval: episodes to play (default: the config's n_evaluator_episode)"
    )
    parser.add_argument(
        "--output",
        metavar="FILE",
        help="eval: write each episode's return and length and the summary to FILE (.json or .csv)",
    )
    return parser


def run_spec(config_path: str, check: int | None = None) -> tuple[str, int]:
    """What ``-m spec`` prints (the spec table and byte counts; with ``check``, the check's report) and the exit
    status (1 when the check found values outside their spaces)."""
    from ding.entry.spec import spec_report

    main_config, create_config = read_config(config_path)
    report = spec_report(main_config, create_config)
    if check is None:
        return report, 0
    from ding.entry.spec_check import check_config

    checked = check_config(main_config, create_config, check)
    return report + "\n\n" + "\n".join(checked.lines()), 0 if checked.passed else 1


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Reject options the chosen mode does not use (argparse's one-line error, exit status 2)."""
    used_by = {
        "env_step": TRAINING_MODES,
        "train_iter": TRAINING_MODES,
        "exp_name": TRAINING_MODES,
        "load_path": (*TRAINING_MODES, "eval"),
        "video": (*TRAINING_MODES, "eval"),
        "collector_video": TRAINING_MODES,
        "n_episode": ("eval",),
        "output": ("eval",),
        "connect": ("worker",),
        "keys": ("worker",),
        "manager_timeout": ("worker",),
        "name": ZMQ_MODES,
        "directory": ("keygen",),
        "check": ("spec",),
        "seconds": ("bench",),
        "write": ("bench",),
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
        try:
            args.load_path = _config_load_path(args.config)
        except DingError as err:
            parser.error(str(err))
        if args.load_path is None:
            parser.error(
                "-m eval needs --load-path CKPT (or policy.load_path in the config): which checkpoint to evaluate"
            )
    for option in ("env_step", "train_iter", "n_episode", "check"):
        value = getattr(args, option)
        if value is not None and value < 1:
            parser.error(f"--{option.replace('_', '-')} must be >= 1, got {value}")
    if args.seconds is not None:
        try:
            check_seconds(args.seconds)
        except DingError as err:
            parser.error(str(err))
    if args.mode == "bench" and args.seed is not None:
        parser.error("-s is not used by -m bench (the envs are seeded with the config's seed)")
    if args.mode == "eval" and args.seed is not None and len(args.seed) > 1:
        parser.error("-m eval takes one --seed")


def _config_load_path(config: str) -> str | None:
    """The config's ``policy.load_path`` (DI-engine's checkpoint to evaluate), or None."""
    from ding.config import read_config

    main_config, _ = read_config(config)
    load_path = (main_config.get("policy") or {}).get("load_path")
    return str(load_path) if load_path else None


def run_serial(args: argparse.Namespace) -> int:
    from ding.entry.run_output import print_result, seed_table
    from ding.entry.serial_entry import serial_pipeline
    from ding.entry.serial_entry_onpolicy import serial_pipeline_onpolicy

    pipeline = serial_pipeline_onpolicy if args.mode == "serial_onpolicy" else serial_pipeline

    seeds = args.seed or [0]
    results = []
    status = 0
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
            video=args.video,
            collector_video=args.collector_video,
        )
        print_result(result)
        results.append(result)
        if result.interrupted:
            status = result.exit_status
            break
    if len(seeds) > 1:
        print(seed_table(results), flush=True)
    return status


def run_eval(args: argparse.Namespace) -> str:
    from ding.entry.eval_entry import eval_checkpoint
    from ding.entry.eval_report import episode_lines, report_format, summary_line, write_eval_report

    if args.output is not None:
        report_format(args.output)  # a wrong extension fails before the episodes are played
    seed = args.seed[0] if args.seed else None
    result = eval_checkpoint(args.config, args.load_path, seed=seed, n_episode=args.n_episode, video=args.video)
    lines = [*episode_lines(result), summary_line(result)]
    if args.output is not None:
        context = {"config": args.config, "load_path": args.load_path, "seed": seed}
        lines.append(f"wrote {write_eval_report(result, args.output, context)}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    status = 0
    try:
        if args.mode == "spec":
            text, status = run_spec(args.config, args.check)
            print(text)
        elif args.mode in TRAINING_MODES:
            from ding.entry.run_output import log_on_stderr

            with log_on_stderr():
                status = run_serial(args)
        elif args.mode == "eval":
            print(run_eval(args))
        elif args.mode == "bench":
            from ding.entry.bench_config import bench_config

            report = bench_config(args.config, args.seconds or DEFAULT_SECONDS, args.write, log=log_line)
            print("\n".join(report.lines))
        elif args.mode == "keygen":
            from ding.entry.env_worker import run_keygen

            print(run_keygen(args.directory, args.name or "worker"))
        elif args.mode == "worker":
            from ding.entry.env_worker import run_worker

            status = run_worker(args.connect, args.keys, args.name or "worker", args.manager_timeout)
    except (DingError, OSError) as err:
        message = " ".join(str(err).split("\n--- original traceback ---")[0].split())
        parser.exit(2, f"ding: error: {message}\n")
    except ImportError as err:  # an optional package the config's env or policy needs
        parser.exit(2, f"ding: error: {missing_package_message(err)}\n")
    except KeyboardInterrupt as err:  # Ctrl-C, or a SIGTERM while a run set up or closed
        from ding.worker.interrupt import exit_status, signal_of

        parser.exit(exit_status(signal_of(err)), "ding: interrupted\n")
    return int(status)


def log_line(message: str) -> None:
    """A progress line on stderr."""
    print(message, file=sys.stderr, flush=True)


def missing_package_message(err: ImportError) -> str:
    """One line for a package the run needs that is not installed.

    >>> missing_package_message(ModuleNotFoundError("No module named 'shimmy'", name='shimmy'))
    "module 'shimmy' is not installed: install the package that provides it, or ding's extra that brings it"
    >>> missing_package_message(ImportError('To use it, run `pip install "shimmy[gym-v26]"`'))
    'a package the run needs is not installed: To use it, run `pip install "shimmy[gym-v26]"`'
    """
    if isinstance(err, ModuleNotFoundError) and err.name:
        name = err.name.split(".")[0]
        return f"module {name!r} is not installed: install the package that provides it, or ding's extra that brings it"
    return f"a package the run needs is not installed: {' '.join(str(err).split())}"


if __name__ == "__main__":
    sys.exit(main())
