#!/usr/bin/env python3
"""Writes the sunrise and sunset figures the solar calculator's tests compare against.

The figures come from astral 3.2 (https://pypi.org/project/astral/, an implementation of NOAA's
solar equations independent of homegate's), called with NOAA's convention: the sun's centre 0.833°
below the horizon (refraction and the sun's radius, astral's `time_of_transit` with zenith 90.833
and its own refraction term off), at sea level. astral's default `sunrise()` uses a slightly
different horizon (its own refraction formula), so it is not called.

Each row is one local date of the place's time zone; when the event of a local date's computation
falls on another local date, the neighbouring date is computed instead (as astral's `sunrise()`
does). A date with no event (polar day or night) has an empty field.

Run it with astral installed (pip install astral==3.2):
    python3 scripts/sun-reference.py Tests/SchedulesTests/Fixtures
"""

import datetime
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import astral
from astral import Observer
from astral.sun import SunDirection, time_of_transit

YEAR = 2025
ZENITH = 90.833
PLACES = [
    ("oslo", "Oslo", 59.9139, 10.7522, "Europe/Oslo"),
    ("quito", "Quito", -0.1807, -78.4678, "America/Guayaquil"),
    ("sydney", "Sydney", -33.8688, 151.2093, "Australia/Sydney"),
    ("anchorage", "Anchorage", 61.2181, -149.9003, "America/Anchorage"),
]


def event(observer, date, zone, direction):
    """The event on local date `date`, or None when the sun does not cross the horizon."""
    try:
        when = time_of_transit(observer, date, ZENITH, direction, with_refraction=False)
        local = when.astimezone(zone).date()
        if local != date:
            shifted = date + datetime.timedelta(days=1 if local < date else -1)
            when = time_of_transit(observer, shifted, ZENITH, direction, with_refraction=False)
        return when
    except ValueError:
        return None


def stamp(when):
    if when is None:
        return ""
    seconds = round(when.timestamp())
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def main(folder):
    for key, name, latitude, longitude, zone_name in PLACES:
        zone = ZoneInfo(zone_name)
        observer = Observer(latitude, longitude, 0.0)
        lines = [
            f"# Sunrise and sunset at {name} for every day of {YEAR}, instants in UTC.",
            f"# From astral {astral.__version__} (NOAA's equations, an implementation independent of homegate's),",
            f"# time_of_transit with zenith {ZENITH} (NOAA's 0.833 degrees) at sea level; made by scripts/sun-reference.py.",
            f"# latitude={latitude}",
            f"# longitude={longitude}",
            f"# timeZone={zone_name}",
            "date,sunrise,sunset",
        ]
        day = datetime.date(YEAR, 1, 1)
        while day.year == YEAR:
            rise = event(observer, day, zone, SunDirection.RISING)
            set_ = event(observer, day, zone, SunDirection.SETTING)
            lines.append(f"{day.isoformat()},{stamp(rise)},{stamp(set_)}")
            day += datetime.timedelta(days=1)
        Path(folder, f"sun-{key}.csv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "Tests/SchedulesTests/Fixtures")
