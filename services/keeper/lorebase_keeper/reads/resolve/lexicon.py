"""The small English lexicon resolve reads questions with, kept as data (docs/resolve.md, issue 31).

Nothing here names a Domain's Kinds or Attributes: a gradable word is tied to a dimension ("cheaper":
money, less), and a dimension to Attributes by what their schema says (their type, the words of
their name and aliases, the words and unit of their description). A Domain ties a word to one of
its Attributes by giving that Attribute an alias that is a cue of the dimension (an alias "price"
makes "cheaper" and "the most expensive" read it), with no change to the schema language.

- NUMBER_WORDS, SCALES: number words ("three", "twenty-five", "a dozen", "two hundred").
- DIMENSIONS: per dimension, the types it applies to, its cues (`strong`: a word of the Attribute's
  name or aliases; `weak`: a word of its description) and its words: positive forms that need
  "more"/"less"/"most"/"least" ("expensive"), comparatives that need "than" ("cheaper"), and
  superlatives ("cheapest"), each with its direction (+1 more, -1 less).
- START_CUES: words of a date Attribute's name or description saying it starts something ("the
  oldest contract" is the one that started first): ranked first among dates.
- STATES: verbs and participles of state, and what they say about a date ("expired", "overdue":
  its end is past).
- LEVELS: verbs of level ("running at"): the number after them is of a dimension ("load").
"""

from __future__ import annotations

from typing import Any

NUMBER_WORDS: dict[str, int] = {
    "zero": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
SCALES: dict[str, int] = {"dozen": 12, "hundred": 100, "thousand": 1000, "million": 1_000_000}
ARTICLES = frozenset({"a", "an"})  # "a dozen", "a hundred": one of the scale

NUMERIC = ("integer", "decimal")
DATES = ("date", "datetime")

# dimension -> types, cues and words. Direction +1: more of the dimension, -1: less.
DIMENSIONS: dict[str, dict[str, Any]] = {
    "money": {
        "types": NUMERIC,
        "strong": ["cost", "price", "total", "value", "amount", "fee", "spend", "budget", "revenue"],
        "weak": ["eur", "usd", "gbp", "chf", "pln", "jpy", "euro", "euros", "dollars", "cost", "price"],
        "positive": {"expensive": 1, "costly": 1, "pricey": 1, "cheap": -1, "inexpensive": -1},
        "comparative": {"cheaper": -1, "pricier": 1, "costlier": 1},
        "superlative": {"cheapest": -1, "priciest": 1, "costliest": 1},
    },
    "age": {
        # a date: older is earlier; a number: older is more (an age in years)
        "types": (*NUMERIC, *DATES),
        "strong": ["age", "aged"],
        "weak": ["age", "aged", "old"],
        "positive": {"old": 1, "young": -1, "new": -1},
        "comparative": {"older": 1, "younger": -1, "newer": -1},
        "superlative": {"oldest": 1, "youngest": -1, "newest": -1},
    },
    "recency": {
        "types": DATES,
        "strong": [],
        "weak": [],
        "positive": {"recent": 1},
        "comparative": {"later": 1, "earlier": -1},
        "superlative": {"latest": 1, "earliest": -1},
    },
    "size": {
        "types": NUMERIC,
        "strong": ["size", "area", "volume", "capacity", "bays", "seats", "surface"],
        "weak": ["size", "area", "volume", "capacity", "m2", "m3", "sqm", "litres", "liters"],
        "positive": {"large": 1, "big": 1, "small": -1},
        "comparative": {"larger": 1, "bigger": 1, "smaller": -1},
        "superlative": {"largest": 1, "biggest": 1, "smallest": -1},
    },
    "weight": {
        "types": NUMERIC,
        "strong": ["weight", "mass", "payload", "load"],
        "weak": ["weight", "mass", "kg", "kilograms", "tonnes", "tons", "t", "payload"],
        "positive": {"heavy": 1, "light": -1},
        "comparative": {"heavier": 1, "lighter": -1},
        "superlative": {"heaviest": 1, "lightest": -1},
    },
    "length": {
        "types": NUMERIC,
        "strong": ["length", "distance", "duration", "time", "mileage", "km", "days", "hours"],
        "weak": [
            "length",
            "distance",
            "duration",
            "km",
            "m",
            "mm",
            "cm",
            "miles",
            "days",
            "hours",
            "minutes",
        ],
        "positive": {"long": 1, "short": -1},
        "comparative": {"longer": 1, "shorter": -1},
        "superlative": {"longest": 1, "shortest": -1},
    },
    "load": {
        # how hard something runs: said with a verb of level ("running at 90 percent"), no adjectives
        "types": NUMERIC,
        "strong": ["load", "output", "utilisation", "utilization", "usage", "speed", "throughput"],
        "weak": ["load", "output", "utilisation", "utilization", "percent", "rpm", "speed"],
        "positive": {},
        "comparative": {},
        "superlative": {},
    },
    "risk": {
        "types": NUMERIC,
        "strong": ["risk"],
        "weak": ["risk"],
        "positive": {"risky": 1, "safe": -1},
        "comparative": {"riskier": 1, "safer": -1},
        "superlative": {"riskiest": 1, "safest": -1},
    },
}
# units as people write them -> as descriptions write them
UNITS = {
    "euro": "eur",
    "euros": "eur",
    "€": "eur",
    "dollar": "usd",
    "dollars": "usd",
    "$": "usd",
    "pounds": "gbp",
    "tons": "tonnes",
    "kilograms": "kg",
    "kilometres": "km",
    "kilometers": "km",
}
MORE = {"more": 1, "less": -1}
MOST = {"most": 1, "least": -1}
TOP = {"top": 1, "bottom": -1}

START_CUES = frozenset(
    {
        "from",
        "start",
        "started",
        "first",
        "created",
        "registered",
        "hired",
        "raised",
        "ordered",
        "placed",
        "opened",
        "since",
        "born",
        "birth",
        "signed",
        "issued",
        "commissioned",
        "installed",
        "built",
        "founded",
        "enrolled",
    }
)
END_CUES = frozenset(
    {"to", "end", "ends", "last", "until", "expiry", "expires", "expiration", "due", "deadline"}
)

# verb forms of state -> (the date they speak of, past: whether the state holds now)
STATES: dict[str, tuple[str, bool]] = {
    "expired": ("end", True),
    "lapsed": ("end", True),
    "ended": ("end", True),
    "expire": ("end", False),
    "expires": ("end", False),
    "expiring": ("end", False),
    "overdue": ("end", True),  # its due date is past
}
# verbs of level: the comparison or number after them is on an Attribute of this dimension
# ("running at more than 90", "operating at 100 percent"; a number alone is `eq`)
LEVELS: dict[tuple[str, ...], str] = {
    ("running", "at"): "load",
    ("runs", "at"): "load",
    ("run", "at"): "load",
    ("operating", "at"): "load",
    ("working", "at"): "load",
}


def lexicon_words() -> frozenset[str]:
    """Every word of the lexicon: English, never a misspelling of a name (similar spelling skips them)."""
    words: set[str] = set(NUMBER_WORDS) | set(SCALES) | set(MORE) | set(MOST) | set(STATES)
    words |= {phrase[0] for phrase in LEVELS}
    for dimension in DIMENSIONS.values():
        for part in ("positive", "comparative", "superlative"):
            words |= set(dimension[part])
    return frozenset(words)


WORDS = lexicon_words()

__all__ = [
    "ARTICLES",
    "DATES",
    "DIMENSIONS",
    "END_CUES",
    "LEVELS",
    "MORE",
    "MOST",
    "NUMBER_WORDS",
    "NUMERIC",
    "SCALES",
    "START_CUES",
    "STATES",
    "TOP",
    "UNITS",
    "WORDS",
]
