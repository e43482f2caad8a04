"""Stop signals raised as RunInterrupted: real signals sent to this process, handlers restored, critical sections."""

from __future__ import annotations

import os
import signal
import threading
import time
from types import FrameType

import pytest

from ding.worker.interrupt import RunInterrupted, critical_section, exit_status, signal_of, stop_on_signals


def wait_for_signal() -> None:
    """Give the interpreter a few bytecodes to run the Python-level handler of a signal just sent."""
    for _ in range(100):
        time.sleep(0.001)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_is_raised_once_and_later_ones_wait(signum: int, status: int) -> None:
    with stop_on_signals() as installed:
        assert installed
        with pytest.raises(RunInterrupted, match=f"stopped by {signal.Signals(signum).name}") as caught:
            os.kill(os.getpid(), signum)
            wait_for_signal()
        assert isinstance(caught.value, KeyboardInterrupt)
        assert (caught.value.signum, caught.value.exit_status, signal_of(caught.value)) == (signum, status, signum)
        os.kill(os.getpid(), signal.SIGTERM)  # while the run saves and closes: ignored
        os.kill(os.getpid(), signal.SIGINT)
        wait_for_signal()
    assert exit_status(signum) == status and signal_of(KeyboardInterrupt()) == signal.SIGINT


def test_previous_handlers_come_back() -> None:
    received: list[int] = []

    def mine(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, mine)
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job starts with SIG_IGN
    try:
        with stop_on_signals():
            with stop_on_signals():  # nested: the outer handlers stay
                pass
            assert signal.getsignal(signal.SIGTERM) is not mine
            with pytest.raises(RunInterrupted):
                os.kill(os.getpid(), signal.SIGTERM)
                wait_for_signal()
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        os.kill(os.getpid(), signal.SIGTERM)
        wait_for_signal()
        assert received == [signal.SIGTERM]
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def test_an_ignored_sigint_stays_ignored_after() -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell's background job inherits it
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_signal_inside_a_critical_section_is_raised_when_it_ends() -> None:
    done: list[str] = []
    with stop_on_signals(), pytest.raises(RunInterrupted, match="SIGTERM"):
        with critical_section():
            with critical_section():
                os.kill(os.getpid(), signal.SIGTERM)
                wait_for_signal()
                done.append("inner")
            wait_for_signal()
            done.append("outer")  # the section finishes its work
        done.append("after")  # not reached
    assert done == ["inner", "outer"]
    with stop_on_signals(), pytest.raises(ValueError, match="its own error"), critical_section():
        os.kill(os.getpid(), signal.SIGINT)
        wait_for_signal()
        raise ValueError("its own error")  # an error already raised is not replaced


def test_off_the_main_thread_nothing_is_installed() -> None:
    seen: list[object] = []

    def run() -> None:
        with stop_on_signals() as installed:
            seen.extend([installed, signal.getsignal(signal.SIGTERM)])

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert seen == [False, before]
