"""Threads per CPU training process: the cores other work leaves free, over the processes; a given count wins, an
impossible one is refused or cut back with one line."""

from __future__ import annotations

import pytest

from accelwiz.errors import UsageError
from accelwiz.launch.threads import busy_cores, threads_here


def test_an_idle_machine_gives_each_process_its_share_of_every_core():
    assert threads_here(1, given=None, environ={}, cores=8).per_process == 8
    assert threads_here(2, given=None, environ={}, cores=8).per_process == 4
    assert threads_here(3, given=None, environ={}, cores=2).per_process == 1  # never zero


def test_cores_a_neighbour_keeps_busy_are_left_to_it():
    # the quickstart beside a 2-process job on 2 cores: one thread, not a pool that waits on preempted threads
    threads = threads_here(1, given=None, environ={}, cores=2, busy=2)
    assert threads.per_process == 1 and "2 busy when launched" in threads.shown()
    assert threads_here(2, given=None, environ={}, cores=16, busy=4).per_process == 6


def test_a_given_count_wins_and_an_impossible_one_is_refused_or_cut_back():
    assert threads_here(1, given=2, environ={}, cores=2, busy=2).per_process == 2  # the user's choice
    assert threads_here(1, given=None, environ={"OMP_NUM_THREADS": "1"}, cores=8).per_process == 1
    with pytest.raises(UsageError, match="at least one thread"):
        threads_here(1, given=0, environ={}, cores=2)
    said: list[str] = []
    assert threads_here(2, given=4, environ={}, cores=4, warn=said).per_process == 2
    assert said and "would oversubscribe" in said[0]


def test_busy_cores_reads_the_machine():
    assert 0 <= busy_cores(2, interval=0.05) <= 2
