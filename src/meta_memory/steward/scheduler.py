"""The steward's cadence: when ``[agent_memory.steward] enabled = true``, dream on a schedule.

``cadence`` is read simply: ``"*/<n><unit>"`` (or ``"<n><unit>"``), unit ``m``, ``h`` or ``d``, means
"at most one scheduled dream per partition every n units, counted from that partition's latest
dream". On top of it, a partition dreams at most ``runs_per_day`` times per UTC day (dreams asked for
on demand count too) and only while at least ``min_signals`` quarantined records, proposals and
exit-interview harvests wait.
Both counts are read from the realm file's ``dream_runs``, so a restart does not reset them. With
``per_mob = true`` each mob of a realm (a roster mob, or one a proposal names that nobody is in) is
its own partition, and whatever no mob claims (the identities in no mob, proposals outside mob
scope) is one more, ``(no mob)``: nothing waits for a partition that is never scheduled.

:meth:`StewardScheduler.tick` is one pass over every realm with a store file, by the injected clock;
the daemon thread started by :meth:`StewardScheduler.start` only calls it every ``poll_interval_s``
and stops at :meth:`StewardScheduler.close`.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable

from ..clock import Clock
from ..errors import ConfigError
from .model import DreamReport
from .steward import Steward

__all__ = ["DAY_MS", "StewardScheduler", "parse_cadence"]

log = logging.getLogger("meta_memory.steward")

DAY_MS = 24 * 3600 * 1000
_UNITS = {"m": 60_000, "h": 3_600_000, "d": DAY_MS}
_CADENCE = re.compile(r"(?:\*/)?([0-9]{1,6})([mhd])")


def parse_cadence(cadence: str) -> int:
    """The minimum interval between scheduled dreams of one partition, in milliseconds.

    Raises:
        ConfigError: ``cadence`` is not ``"*/<n>m|h|d"`` with n ≥ 1.
    """
    match = _CADENCE.fullmatch(cadence.strip())
    if match is None or int(match.group(1)) < 1:
        raise ConfigError(
            f"agent_memory.steward.cadence must look like '*/6h' (every n minutes, hours or days: "
            f"'*/<n>m', '*/<n>h', '*/<n>d'), got {cadence!r}"
        )
    return int(match.group(1)) * _UNITS[match.group(2)]


class StewardScheduler:
    """Runs due dreams; :meth:`tick` is the whole policy, the thread only repeats it."""

    def __init__(
        self,
        steward: Steward,
        *,
        clock: Clock,
        realms: Callable[[], Iterable[str]] | None = None,
        poll_interval_s: float = 60.0,
    ) -> None:
        """Raises:
        ConfigError: the steward's ``cadence`` cannot be read.
        """
        self.steward = steward
        self.interval_ms = parse_cadence(steward.config.cadence)
        self._clock = clock
        # Every realm that has a store (nothing waits in the others).
        self._realms = realms or steward.memory.realms
        self.poll_interval_s = poll_interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def due(self, realm: str, mob: str | None = None, *, unaffiliated: bool = False) -> bool:
        """Whether the partition may dream now: interval passed, daily budget left, enough signals."""
        config = self.steward.config
        now = self._clock.now_ms()
        partition = self.steward.partition_of(realm, mob, unaffiliated=unaffiliated)
        runs_today, latest = self.steward.memory.store(realm).run_stats(partition, now - now % DAY_MS)
        if runs_today >= config.runs_per_day:
            return False
        if latest is not None and now - latest < self.interval_ms:
            return False
        return self.steward.signals(realm, mob=mob, unaffiliated=unaffiliated) >= config.min_signals

    def _partitions(self, realm: str) -> list[tuple[str | None, bool]]:
        """``(mob, unaffiliated)`` of every partition of ``realm`` a pass considers."""
        if not self.steward.config.per_mob:
            return [(None, False)]
        return [*((mob, False) for mob in self.steward.mob_partitions(realm)), (None, True)]

    def tick(self) -> list[DreamReport]:
        """One scheduling pass: dream every due partition. A failing dream is logged, not raised."""
        reports: list[DreamReport] = []
        for realm in self._realms():
            try:
                partitions = self._partitions(realm)
            except Exception:
                log.exception("listing the steward partitions of realm %r failed", realm)
                continue
            for mob, unaffiliated in partitions:
                try:
                    if self.due(realm, mob, unaffiliated=unaffiliated):
                        reports.append(self.steward.dream(realm, mob=mob, unaffiliated=unaffiliated))
                except Exception:
                    partition = self.steward.partition_of(realm, mob, unaffiliated=unaffiliated)
                    log.exception("scheduled steward dream of realm %r (%s) failed", realm, partition)
        return reports

    def start(self) -> None:
        """Start the daemon thread (idempotent)."""
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="meta-steward", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.poll_interval_s):
            self.tick()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def close(self, timeout_s: float = 30.0) -> None:
        """Stop the thread and wait for a dream in progress to finish. Safe to call twice."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout_s)
