"""Times as people type them in ``--since`` and ``--until``: ISO-8601 (naive = UTC), a span back from the
newest event of the inputs (``30m``, ``2h``, ``1d``, ``1h30m``, ``'30m ago'``; from now with ``now``), or a
time of day (``10:05``, ``10:05:30.250``) on the inputs' date.

A bound that needs the inputs is parsed before any log is read (a typo is a usage error at once) and
resolved once the events' time extent is known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

_SPAN_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|s|sec|m|min|h|d|w)", re.IGNORECASE)
_SPAN = re.compile(rf"(?:{_SPAN_PART.pattern}\s*)+(?:ago)?", re.IGNORECASE)
_TIME_OF_DAY = re.compile(r"\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d{1,6})?)?Z?", re.IGNORECASE)
_UNIT = {"ms": timedelta(milliseconds=1), "s": timedelta(seconds=1), "sec": timedelta(seconds=1), "m": timedelta(minutes=1),
         "min": timedelta(minutes=1), "h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
EXAMPLES = "2024-10-24T12:00Z, 30m, 2h, 1d, 10:05"


@dataclass(frozen=True)
class TimeBound:
    """One bound as typed: exactly one of ``absolute``, ``back`` (a span before the newest event, or before
    now) and ``time_of_day`` is set."""

    text: str
    option: str
    absolute: datetime | None = None
    back: timedelta | None = None
    time_of_day: time | None = None

    @classmethod
    def parse(cls, text: str | datetime | TimeBound, option: str = "--since") -> TimeBound:
        """The bound ``text`` names; ValueError (saying what is accepted) when it names none."""
        if isinstance(text, TimeBound):
            return text
        if isinstance(text, datetime):
            return cls(text.isoformat(), option, absolute=text if text.tzinfo else text.replace(tzinfo=UTC))
        typed = text.strip()
        if _SPAN.fullmatch(typed):
            back = sum((float(amount) * _UNIT[unit.lower()] for amount, unit in _SPAN_PART.findall(typed)), timedelta())
            return cls(text, option, back=back)
        if _TIME_OF_DAY.fullmatch(typed):
            try:
                return cls(text, option, time_of_day=time.fromisoformat(typed.rstrip("Zz").replace(",", ".").zfill(5)))
            except ValueError:
                pass
        try:
            stamp = datetime.fromisoformat(typed.replace("z", "Z").replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{option} {text!r} is not a time: give ISO-8601, a span back from the newest event or a time "
                             f"of day (e.g. {EXAMPLES})") from None
        return cls(text, option, absolute=stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC))

    @property
    def needs_inputs(self) -> bool:
        """Whether the bound depends on the events' times (a span back from the newest, a time of day)."""
        return self.absolute is None

    def resolve(self, oldest: datetime | None, newest: datetime | None, now: datetime | None = None) -> datetime:
        """The instant this bound names, given the events' time extent (UTC) and, for spans counted back from
        the wall clock, ``now``. ValueError when the inputs cannot place it."""
        if self.absolute is not None:
            return self.absolute
        if self.back is not None and now is not None:
            return now - self.back
        if oldest is None or newest is None:
            raise ValueError(f"{self.option} {self.text!r}: the inputs hold no timestamped event to place it by; give a date "
                             f"and time{' or --now' if self.back is not None else ''}")
        if self.back is not None:
            return newest - self.back
        return self._on_inputs_date(oldest, newest)

    def _on_inputs_date(self, oldest: datetime, newest: datetime) -> datetime:
        """The time of day on the one date of the inputs on which it falls inside their extent."""
        assert self.time_of_day is not None
        days = [oldest.date() + timedelta(days=n) for n in range((newest.date() - oldest.date()).days + 1)]
        if len(days) == 1:
            return _at(days[0], self.time_of_day)
        inside = [_at(day, self.time_of_day) for day in days if oldest <= _at(day, self.time_of_day) <= newest]
        if len(inside) == 1:
            return inside[0]
        example = (inside or [_at(days[-1], self.time_of_day)])[-1]
        raise ValueError(f"{self.option} {self.text!r} is ambiguous: the events run from {_shown(oldest)} to {_shown(newest)}, over "
                         f"{len(days)} dates; give the date too, e.g. {example.strftime('%Y-%m-%dT%H:%M:%SZ')}")


def _at(day: date, moment: time) -> datetime:
    return datetime.combine(day, moment, tzinfo=UTC)


def _shown(stamp: datetime) -> str:
    return stamp.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%SZ")
