"""ISO 8601 durations of fixed length (weeks, days, hours, minutes, seconds): P1D, PT6H, P1DT12H.

Years and months have no fixed length, so a duration naming them is refused; write days instead.
"""

from __future__ import annotations

import re

__all__ = ["parse_duration"]

_DURATION = re.compile(
    r"P(?:(?P<weeks>\d+)W)?(?:(?P<days>\d+)D)?"
    r"(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?"
)
_SECONDS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}


def parse_duration(text: str) -> float:
    """The seconds of an ISO 8601 duration; ValueError saying what to write instead."""
    match = _DURATION.fullmatch(text.strip().upper()) if isinstance(text, str) else None
    if match is None or text.strip().upper().endswith("T") or not any(match.groupdict().values()):
        if isinstance(text, str) and re.fullmatch(r"P.*\d+[YM].*", text.split("T")[0].upper()):
            raise ValueError(f"{text!r} names years or months, which have no fixed length; write days (P30D)")
        raise ValueError(f"{text!r} is not an ISO 8601 duration such as P1D, PT6H or P1DT12H")
    seconds = sum(float(value) * _SECONDS[unit] for unit, value in match.groupdict().items() if value)
    if seconds <= 0:
        raise ValueError(f"{text!r} is zero; a duration must be longer than that")
    return seconds
