"""German and French words of the lexicon, kept as data: each is read as the English word of the
lexicon it stands for (its `sense`), so comparisons, comparatives, superlatives, number words,
verbs of state, intent hints and dates as people say them work in the languages the stop-word lists
exist for (`read.resolve.language`: en, de, fr; docs/resolve.md). Names and values are matched on
the words as written: only the lexicon's levels read the senses.

- WORDS: per language, a word (case-folded) and the English word it stands for; German inflected
  forms ("billigere", "billigsten") and number words to ninety-nine ("einundzwanzig",
  "quatre-vingt-dix") are made by rule from the stems below.
- PHRASES: runs of words read as a run of the same length ("wie viele": how many, "plus de": more
  than, "au moins": at least), tried before single words.
- ARTICLES, GRADES (French): "plus" and "moins" are "more"/"less", but "most"/"least" after an
  article ("le plus cher", "les trois moins chères").
- AFTER (French): a word of time said after its noun ("le mois dernier", "les 30 derniers jours")
  swaps senses with the word before it when that is a period or a number: "last month".
"""

from __future__ import annotations

from lorebase_keeper.reads.resolve.lexicon import NUMBER_WORDS

_ENGLISH = {number: word for word, number in NUMBER_WORDS.items()}


def english_number(n: int) -> str:
    """0..99 as the lexicon writes it: "seven", "twenty", "twenty-five"."""
    if n in _ENGLISH:
        return _ENGLISH[n]
    return f"{_ENGLISH[n - n % 10]}-{_ENGLISH[n % 10]}"


# German ---------------------------------------------------------------------------------------------

_DE_UNITS = [
    "null",
    "eins",
    "zwei",
    "drei",
    "vier",
    "fünf",
    "sechs",
    "sieben",
    "acht",
    "neun",
    "zehn",
    "elf",
    "zwölf",
    "dreizehn",
    "vierzehn",
    "fünfzehn",
    "sechzehn",
    "siebzehn",
    "achtzehn",
    "neunzehn",
]
_DE_TENS = {
    20: "zwanzig",
    30: "dreißig",
    40: "vierzig",
    50: "fünfzig",
    60: "sechzig",
    70: "siebzig",
    80: "achtzig",
    90: "neunzig",
}


def _german_numbers() -> dict[str, str]:
    out = {word: english_number(n) for n, word in enumerate(_DE_UNITS)}
    for tens, word in _DE_TENS.items():
        out[word] = english_number(tens)
        for unit in range(1, 10):
            prefix = "ein" if unit == 1 else _DE_UNITS[unit]
            out[f"{prefix}und{word}"] = english_number(tens + unit)  # einundzwanzig
    for unit in range(2, 10):
        out[f"{_DE_UNITS[unit]}hundert"] = f"{english_number(unit)}-hundred"  # zweihundert
    out |= {"hundert": "hundred", "einhundert": "one-hundred", "tausend": "thousand", "dutzend": "dozen"}
    out |= dict.fromkeys(("ein", "eine", "einen", "einem", "einer"), "one")  # "ein Dutzend"
    return out


_DE_ENDINGS = ("", "e", "en", "er", "es", "em")
# comparative and superlative stems -> English (inflected by _DE_ENDINGS: "billigere", "billigsten")
_DE_COMPARATIVE = {
    "billiger": "cheaper",
    "günstiger": "cheaper",
    "teurer": "pricier",
    "älter": "older",
    "jünger": "younger",
    "neuer": "newer",
    "größer": "larger",
    "kleiner": "smaller",
    "schwerer": "heavier",
    "leichter": "lighter",
    "länger": "longer",
    "kürzer": "shorter",
    "riskanter": "riskier",
    "sicherer": "safer",
    "später": "later",
    "früher": "earlier",
}
_DE_SUPERLATIVE = {
    "billigst": "cheapest",
    "günstigst": "cheapest",
    "teuerst": "priciest",
    "ältest": "oldest",
    "jüngst": "youngest",
    "neuest": "newest",
    "größt": "largest",
    "kleinst": "smallest",
    "schwerst": "heaviest",
    "leichtest": "lightest",
    "längst": "longest",
    "kürzest": "shortest",
    "riskantest": "riskiest",
    "sicherst": "safest",
    "spätest": "latest",
    "frühest": "earliest",
    "höchst": "highest",
    "niedrigst": "lowest",
}
_DE_WORDS = {
    # comparison
    "mehr": "more",
    "weniger": "less",
    "als": "than",
    "über": "above",
    "unter": "under",
    "mindestens": "minimum",
    "höchstens": "maximum",
    "vor": "before",
    "nach": "after",
    "seit": "since",
    "ab": "from",
    "bis": "until",
    "zwischen": "between",
    "und": "and",
    "im": "in",
    "während": "during",
    "genau": "exactly",
    "höher": "higher",
    "niedriger": "lower",
    "geringer": "lower",
    "meisten": "most",
    "wenigsten": "fewest",
    # articles and hints
    "der": "the",
    "die": "the",
    "das": "the",
    "den": "the",
    "dem": "the",
    "am": "the",
    "pro": "per",
    "je": "per",
    "jeder": "each",
    "jede": "each",
    "jedes": "each",
    "jeden": "each",
    "jedem": "each",
    "top": "top",
    # states
    "abgelaufen": "expired",
    "abgelaufene": "expired",
    "abgelaufenen": "expired",
    "abgelaufener": "expired",
    "überfällig": "overdue",
    "überfällige": "overdue",
    "überfälligen": "overdue",
    "nicht": "not",
    "ohne": "without",
    "nie": "never",
    "niemals": "never",
    # dates
    "januar": "january",
    "februar": "february",
    "märz": "march",
    "april": "april",
    "mai": "may",
    "juni": "june",
    "juli": "july",
    "august": "august",
    "september": "september",
    "oktober": "october",
    "november": "november",
    "dezember": "december",
    "heute": "today",
    "gestern": "yesterday",
    "morgen": "tomorrow",
    "tag": "day",
    "tage": "days",
    "tagen": "days",
    "woche": "week",
    "wochen": "weeks",
    "monat": "month",
    "monate": "months",
    "monaten": "months",
    "quartal": "quarter",
    "quartale": "quarters",
    "quartalen": "quarters",
    "jahr": "year",
    "jahres": "year",
    "jahre": "years",
    "jahren": "years",
    "ende": "end",
    "anfang": "start",
    "beginn": "start",
}
for _stem in ("letzt", "vergangen", "vorig"):
    _DE_WORDS |= {_stem + ending: "last" for ending in _DE_ENDINGS[1:]}
for _stem in ("dies", "diesem"):
    _DE_WORDS |= {_stem + ending: "this" for ending in _DE_ENDINGS[1:]}
for _stem in ("nächst", "kommend"):
    _DE_WORDS |= {_stem + ending: "next" for ending in _DE_ENDINGS[1:]}


def _german() -> dict[str, str]:
    out = dict(_DE_WORDS)
    for stem, english in _DE_COMPARATIVE.items():
        out |= {stem + ending: english for ending in _DE_ENDINGS}
    for stem, english in _DE_SUPERLATIVE.items():
        out |= {stem + ending: english for ending in _DE_ENDINGS[1:]}
    return _german_numbers() | out


# French ---------------------------------------------------------------------------------------------

_FR_UNITS = [
    "zéro",
    "un",
    "deux",
    "trois",
    "quatre",
    "cinq",
    "six",
    "sept",
    "huit",
    "neuf",
    "dix",
    "onze",
    "douze",
    "treize",
    "quatorze",
    "quinze",
    "seize",
    "dix-sept",
    "dix-huit",
    "dix-neuf",
]
_FR_TENS = {20: "vingt", 30: "trente", 40: "quarante", 50: "cinquante", 60: "soixante"}


def _french_numbers() -> dict[str, str]:
    out = {word: english_number(n) for n, word in enumerate(_FR_UNITS)}
    out["une"] = "one"
    for tens, word in _FR_TENS.items():
        out[word] = english_number(tens)
        for unit in range(1, 10):
            joined = f"{word}-et-un" if unit == 1 else f"{word}-{_FR_UNITS[unit]}"
            out[joined] = english_number(tens + unit)
    for n in range(70, 80):  # soixante-dix, soixante-et-onze, soixante-douze...
        joined = "soixante-et-onze" if n == 71 else f"soixante-{_FR_UNITS[n - 60]}"
        out[joined] = english_number(n)
    out["quatre-vingts"] = english_number(80)
    for n in range(81, 100):  # quatre-vingt-un, quatre-vingt-dix-neuf
        out[f"quatre-vingt-{_FR_UNITS[n - 80]}"] = english_number(n)
    out |= {"cent": "hundred", "cents": "hundred", "mille": "thousand"}
    out |= {"douzaine": "dozen", "douzaines": "dozen"}
    return out


def _forms(*stems: str) -> list[str]:
    """The gender and number forms of French adjectives given as masculine singular and feminine
    singular: "cher", "chère" -> cher, chère, chers, chères."""
    out: list[str] = []
    for stem in stems:
        out += [stem, stem if stem.endswith(("s", "x")) else stem + "s"]
    return out


_FR_ADJECTIVES = {
    "expensive": _forms("cher", "chère", "coûteux", "coûteuse"),
    "old": _forms("vieux", "vieille", "âgé", "âgée", "ancien", "ancienne"),
    "young": _forms("jeune"),
    "new": _forms("nouveau", "nouvelle", "nouveaux"),
    "recent": _forms("récent", "récente"),
    "large": _forms("grand", "grande", "gros", "grosse"),
    "small": _forms("petit", "petite"),
    "heavy": _forms("lourd", "lourde"),
    "light": _forms("léger", "légère"),
    "long": _forms("long", "longue"),
    "short": _forms("court", "courte"),
    "risky": _forms("risqué", "risquée"),
    "safe": _forms("sûr", "sûre"),
}
_FR_WORDS = {
    # comparison
    "que": "than",
    "avant": "before",
    "après": "after",
    "depuis": "since",
    "dès": "from",
    "entre": "between",
    "et": "and",
    "en": "in",
    "pendant": "during",
    "exactement": "exactly",
    "minimum": "minimum",
    "maximum": "maximum",
    # articles and hints
    "le": "the",
    "la": "the",
    "les": "the",
    "l": "the",
    "par": "per",
    "chaque": "each",
    "top": "top",
    # states
    "expiré": "expired",
    "expirée": "expired",
    "expirés": "expired",
    "expirées": "expired",
    "échu": "expired",
    "échue": "expired",
    "échus": "expired",
    "échues": "expired",
    "jamais": "never",
    "sans": "without",
    # dates
    "janvier": "january",
    "février": "february",
    "mars": "march",
    "avril": "april",
    "mai": "may",
    "juin": "june",
    "juillet": "july",
    "août": "august",
    "septembre": "september",
    "octobre": "october",
    "novembre": "november",
    "décembre": "december",
    "aujourd'hui": "today",
    "hier": "yesterday",
    "demain": "tomorrow",
    "jour": "day",
    "jours": "days",
    "semaine": "week",
    "semaines": "weeks",
    "mois": "month",
    "trimestre": "quarter",
    "trimestres": "quarters",
    "an": "year",
    "ans": "years",
    "année": "year",
    "années": "years",
    "ce": "this",
    "cet": "this",
    "cette": "this",
    "fin": "end",
    "début": "start",
}
for _word in ("dernier", "dernière", "derniers", "dernières", "passé", "passée"):
    _FR_WORDS[_word] = "last"
for _word in ("prochain", "prochaine", "prochains", "prochaines"):
    _FR_WORDS[_word] = "next"


def _french() -> dict[str, str]:
    out = _french_numbers()
    for english, forms in _FR_ADJECTIVES.items():
        out |= dict.fromkeys(forms, english)
    return out | _FR_WORDS


WORDS: dict[str, dict[str, str]] = {
    "de": {word.casefold(): sense for word, sense in _german().items()},
    "fr": {word.casefold(): sense for word, sense in _french().items()},
}
PHRASES: dict[str, dict[tuple[str, ...], tuple[str, ...]]] = {
    "de": {
        ("wie", "viele"): ("how", "many"),
        ("wie", "viel"): ("how", "many"),
        ("anzahl", "der"): ("number", "of"),
        ("anzahl", "an"): ("number", "of"),
        ("mehr", "als"): ("more", "than"),
        ("weniger", "als"): ("less", "than"),
        ("nicht", "mehr", "als"): ("no", "more", "than"),
        ("ende", "des"): ("end", "of"),
        ("anfang", "des"): ("start", "of"),
    },
    "fr": {
        ("combien", "de"): ("how", "many"),
        ("combien", "d'"): ("how", "many"),
        ("en", "retard"): ("in", "overdue"),
        ("nombre", "de"): ("number", "of"),
        ("nombre", "d'"): ("number", "of"),
        ("plus", "de"): ("more", "than"),
        ("moins", "de"): ("less", "than"),
        ("au", "moins"): ("at", "least"),
        ("au", "plus"): ("at", "most"),
        ("supérieur", "à"): ("greater", "than"),
        ("supérieure", "à"): ("greater", "than"),
        ("supérieurs", "à"): ("greater", "than"),
        ("supérieures", "à"): ("greater", "than"),
        ("inférieur", "à"): ("lower", "than"),
        ("inférieure", "à"): ("lower", "than"),
        ("inférieurs", "à"): ("lower", "than"),
        ("inférieures", "à"): ("lower", "than"),
        ("fin", "de"): ("end", "of"),
        ("début", "de"): ("start", "of"),
        ("jusqu'", "à"): ("up", "to"),
    },
}
ARTICLES: dict[str, frozenset[str]] = {"fr": frozenset({"le", "la", "les", "l", "l'"})}
GRADES: dict[str, dict[str, tuple[str, str]]] = {"fr": {"plus": ("more", "most"), "moins": ("less", "least")}}
AFTER: dict[str, frozenset[str]] = {
    "fr": frozenset(
        {"dernier", "dernière", "derniers", "dernières", "passé", "passée"}
        | {"prochain", "prochaine", "prochains", "prochaines"}
    )
}
PERIODS = frozenset(
    {"day", "days", "week", "weeks", "month", "months", "quarter", "quarters", "year", "years"}
)

__all__ = ["AFTER", "ARTICLES", "GRADES", "PERIODS", "PHRASES", "WORDS", "english_number"]
