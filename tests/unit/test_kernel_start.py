"""The run's kernel lock (:mod:`scripts.kernel_start`) and nbval's kernel start under it
(:mod:`tests.nbval_kernel`): one holder at a time, across processes; a kernel that died
while starting is started once more, and only once."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from scripts.kernel_start import starting

HOLD = "from scripts.kernel_start import starting; import time\nwith starting():\n"


def test_a_second_process_waits_for_the_lock():
    with starting():
        other = subprocess.Popen(
            [sys.executable, "-c", HOLD + "    print(time.monotonic(), flush=True)"],
            stdout=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        released = time.monotonic()
    entered = float(other.communicate(timeout=60)[0])
    assert entered >= released  # the other process entered only once this one left


DIED = RuntimeError("Kernel died before replying to kernel_info")
SLOW = RuntimeError("Kernel didn't respond in 60 seconds")


@pytest.mark.parametrize(
    "outcomes, starts",
    [
        ([DIED, "started"], 2),  # died once: started again
        ([DIED, DIED], 2),  # died twice: nbval's error, no third start
        ([SLOW], 1),  # not a death: not started again
    ],
    ids=["died once", "died twice", "too slow"],
)
def test_nbval_kernel_starts_again_once_after_a_death(monkeypatch, outcomes, starts):
    pytest.importorskip("nbval")
    from tests import nbval_kernel

    calls = []

    def start(**kwargs):
        calls.append(kwargs)
        outcome = outcomes[len(calls) - 1]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(nbval_kernel, "_start", start)
    if outcomes[starts - 1] == "started":
        assert nbval_kernel.start_new_kernel(kernel_name="python3") == "started"
    else:
        with pytest.raises(RuntimeError, match=str(outcomes[starts - 1])[:12]):
            nbval_kernel.start_new_kernel(kernel_name="python3")
    assert calls == [{"kernel_name": "python3"}] * starts
