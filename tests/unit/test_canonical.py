import datetime as dt
import json
from decimal import Decimal, localcontext

import pytest
from hypothesis import given as for_all
from hypothesis import strategies as st

from lorebase.canonical import (
    ValueProblem,
    canonical_datetime,
    canonical_json,
    canonical_text,
    canonical_value,
    canonicalizer,
    sha256_hex,
)
from lorebase.schema import Attribute


def attr(type_: str, **members) -> Attribute:
    if type_.startswith("decimal("):
        precision, scale = (int(part) for part in type_[len("decimal(") : -1].split(","))
        return Attribute(name="a", type="decimal", precision=precision, scale=scale, **members)
    return Attribute(name="a", type=type_, **members)


def rule_of(attribute: Attribute, value) -> str:
    with pytest.raises(ValueProblem) as caught:
        canonical_value(attribute, value)
    return caught.value.rule


@pytest.mark.parametrize(
    "type_", ["string", "text", "integer", "decimal(10,2)", "boolean", "date", "datetime", "enum"]
)
def test_none_stays_none(type_):
    assert canonical_value(attr(type_, values=("a",)), None) is None


def test_strings():
    assert canonical_value(attr("string"), "Ünïcode ✓") == "Ünïcode ✓"
    assert canonical_value(attr("text"), "") == ""
    assert rule_of(attr("string"), 12) == "value.type"
    assert rule_of(attr("text"), True) == "value.type"


def test_string_length_bounds_and_pattern():
    bounded = attr("string", min=Decimal(2), max=Decimal(3))
    assert canonical_value(bounded, "abc") == "abc"
    assert rule_of(bounded, "a") == "value.min"
    assert rule_of(bounded, "abcd") == "value.max"
    code = attr("string", pattern="S-[0-9]{4}")
    assert canonical_value(code, "S-0001") == "S-0001"
    assert rule_of(code, "S-0001x") == "value.pattern"  # the whole value must match
    assert rule_of(code, "xS-0001") == "value.pattern"


def test_enum():
    status = attr("enum", values=("active", "inactive"), value_aliases={"inactive": ("dormant",)})
    assert canonical_value(status, "active") == "active"
    with pytest.raises(ValueProblem) as caught:
        canonical_value(status, "dormant")
    assert caught.value.rule == "value.enum"
    assert "alias of 'inactive'" in caught.value.message
    assert rule_of(status, 1) == "value.type"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (90, "90"),
        ("90", "90"),
        ("-3", "-3"),
        ("+7", "7"),
        ("007", "7"),
        ("-0", "0"),
        (5.0, "5"),
        (2**70, str(2**70)),
    ],
)
def test_integer(given, expected):
    assert canonical_value(attr("integer"), given) == expected


@pytest.mark.parametrize(
    "given", [True, False, 1.5, "1.0", "1e3", " 1", "1_000", "", "٣", float("nan"), float("inf"), [1]]
)
def test_integer_rejects(given):
    assert rule_of(attr("integer"), given) == "value.type"


def test_integer_bounds():
    score = attr("integer", min=Decimal(0), max=Decimal(100))
    assert canonical_value(score, "100") == "100"
    assert rule_of(score, -1) == "value.min"
    assert rule_of(score, 101) == "value.max"


@pytest.mark.parametrize(
    ("type_", "given", "expected"),
    [
        ("decimal(10,2)", 24.01, "24.01"),
        ("decimal(10,2)", "24.01", "24.01"),
        ("decimal(10,2)", 5, "5.00"),
        ("decimal(10,2)", "5.", "5.00"),
        ("decimal(10,2)", ".5", "0.50"),
        ("decimal(10,2)", "24.010", "24.01"),  # trailing zeros lose nothing
        ("decimal(10,2)", "-0.00", "0.00"),
        ("decimal(10,2)", "99999999.99", "99999999.99"),
        ("decimal(10,2)", Decimal("1.5"), "1.50"),
        ("decimal(5,0)", "12345", "12345"),
        ("decimal(3,3)", "0.125", "0.125"),
        (
            "decimal(38,10)",
            "1234567890123456789012345678.0123456789",
            "1234567890123456789012345678.0123456789",
        ),
    ],
)
def test_decimal(type_, given, expected):
    assert canonical_value(attr(type_), given) == expected


@pytest.mark.parametrize(
    ("type_", "given", "rule"),
    [
        ("decimal(10,2)", "24.011", "value.precision"),  # never rounded
        ("decimal(10,2)", 0.125, "value.precision"),
        ("decimal(10,2)", "100000000", "value.precision"),  # 9 integer digits > 10-2
        ("decimal(3,3)", "1", "value.precision"),
        ("decimal(10,2)", "1e2", "value.type"),
        ("decimal(10,2)", "NaN", "value.type"),
        ("decimal(10,2)", float("inf"), "value.type"),
        ("decimal(10,2)", True, "value.type"),
        ("decimal(10,2)", "", "value.type"),
        ("decimal(10,2)", "1,5", "value.type"),
    ],
)
def test_decimal_rejects(type_, given, rule):
    assert rule_of(attr(type_), given) == rule


def test_decimal_bounds():
    cost = attr("decimal(10,2)", min=Decimal(0), max=Decimal("9.5"))
    assert canonical_value(cost, "9.50") == "9.50"
    assert rule_of(cost, "-0.01") == "value.min"
    assert rule_of(cost, "9.51") == "value.max"


def test_boolean():
    assert canonical_value(attr("boolean"), True) is True
    assert canonical_value(attr("boolean"), False) is False
    for given in ("true", 1, 0, "yes"):
        assert rule_of(attr("boolean"), given) == "value.type"


def test_date():
    assert canonical_value(attr("date"), "2024-02-29") == "2024-02-29"
    assert canonical_value(attr("date"), dt.date(2024, 1, 5)) == "2024-01-05"
    for given in (
        "2023-02-29",
        "2024-1-5",
        "20240105",
        "2024-01-05T00:00:00Z",
        20240105,
        dt.datetime(2024, 1, 5),
    ):
        assert rule_of(attr("date"), given) == "value.type"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2024-05-01T10:00:00Z", "2024-05-01T10:00:00Z"),
        ("2024-05-01T12:00:00+02:00", "2024-05-01T10:00:00Z"),
        ("2024-05-01T00:30:00-01:00", "2024-05-01T01:30:00Z"),
        ("2024-05-01 10:00:00+0000", "2024-05-01T10:00:00Z"),
        ("2024-05-01T10:00Z", "2024-05-01T10:00:00Z"),
        ("2024-05-01T10:00:00.5Z", "2024-05-01T10:00:00.500000Z"),
        ("2024-05-01T10:00:00.123456000Z", "2024-05-01T10:00:00.123456Z"),
        ("2024-05-01T10:00:00.000Z", "2024-05-01T10:00:00Z"),
        ("2024-01-01T01:00:00+05:30", "2023-12-31T19:30:00Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
        (dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2))), "2024-05-01T10:00:00Z"),
    ],
)
def test_datetime(given, expected):
    assert canonical_value(attr("datetime"), given) == expected


@pytest.mark.parametrize(
    ("given", "rule"),
    [
        ("2024-05-01T10:00:00", "value.type"),  # naive
        (dt.datetime(2024, 5, 1, 10), "value.type"),  # naive
        ("2024-05-01", "value.type"),
        ("2024-05-01T25:00:00Z", "value.type"),
        ("2024-05-01T23:59:60Z", "value.type"),
        ("2024-05-01T10:00:00+24:00", "value.type"),
        ("0001-01-01T00:00:00+01:00", "value.type"),  # before year 1 in UTC
        ("2024-05-01T10:00:00.1234567Z", "value.precision"),
        (1714557600, "value.type"),
    ],
)
def test_datetime_rejects(given, rule):
    assert rule_of(attr("datetime"), given) == rule


def test_canonical_text():
    assert canonical_text("S-0001") == "S-0001"
    assert canonical_text(True) == "true"
    assert canonical_text(False) == "false"
    assert canonical_text(None) == ""
    assert canonical_text(90) == "90"
    assert canonical_text(Decimal("1E+2")) == "100"
    assert canonical_text(dt.date(2024, 1, 2)) == "2024-01-02"


def test_canonical_json():
    assert canonical_json({"b": 1, "a": ["é", None, True]}) == '{"a":["é",null,true],"b":1}'.encode()
    with pytest.raises(TypeError):
        canonical_json({"a": Decimal("1.5")})
    with pytest.raises(ValueError):
        canonical_json({"a": float("nan")})
    assert sha256_hex(b"") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"


def test_value_problem_carries_rule_and_message():
    problem = ValueProblem("value.max", "must be at most 100, got 101")
    assert (problem.rule, problem.message, str(problem)) == (
        "value.max",
        "must be at most 100, got 101",
        problem.message,
    )


# Properties: canonical values are fixed points, and canonical JSON does not depend on key order.


@for_all(st.one_of(st.integers(), st.integers().map(str)))
def test_integer_is_idempotent(value):
    once = canonical_value(attr("integer"), value)
    assert canonical_value(attr("integer"), once) == once
    assert int(once) == int(value)


@for_all(
    st.integers(min_value=1, max_value=38).flatmap(
        lambda precision: st.tuples(st.just(precision), st.integers(min_value=0, max_value=precision))
    ),
    st.data(),
)
def test_decimal_is_idempotent(shape, data):
    precision, scale = shape
    # the unscaled digits as an integer: exact at any precision (st.decimals rounds bounds past 28 digits)
    unscaled = data.draw(st.integers(min_value=-(10**precision - 1), max_value=10**precision - 1))
    with localcontext() as context:
        context.prec = 100
        value = Decimal(unscaled).scaleb(-scale)
    attribute = attr(f"decimal({precision},{scale})")
    once = canonical_value(attribute, format(value, "f"))
    assert canonical_value(attribute, once) == once
    assert Decimal(once) == value
    assert len(once.partition(".")[2]) == scale


@for_all(
    st.datetimes(
        min_value=dt.datetime(2, 1, 1),
        max_value=dt.datetime(9998, 12, 31),
        timezones=st.builds(
            dt.timezone,
            st.timedeltas(min_value=dt.timedelta(hours=-23), max_value=dt.timedelta(hours=23)).map(
                lambda d: dt.timedelta(minutes=d // dt.timedelta(minutes=1))
            ),
        ),
    )
)
def test_datetime_is_idempotent(moment):
    once = canonical_value(attr("datetime"), moment.isoformat())
    assert canonical_value(attr("datetime"), once) == once
    assert canonical_datetime(moment) == once
    assert dt.datetime.fromisoformat(once) == moment


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@for_all(_json)
def test_canonical_json_is_stable(value):
    encoded = canonical_json(value)
    assert canonical_json(json.loads(encoded)) == encoded
    if isinstance(value, dict):
        assert canonical_json(dict(reversed(list(value.items())))) == encoded


def _stdlib_json(value) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode()


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(alphabet=st.characters(exclude_categories=["Cs"])),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@for_all(_JSON)
def test_canonical_json_writes_the_bytes_of_json_dumps(value):
    """orjson writes where its bytes are json's; floats, NaN, big integers go through json."""
    try:
        expected: object = _stdlib_json(value)
    except ValueError as error:
        expected = type(error)
    try:
        found: object = canonical_json(value)
    except ValueError as error:
        found = type(error)
    assert found == expected


@for_all(
    st.integers(min_value=1, max_value=14),
    st.integers(min_value=0, max_value=14),
    st.from_regex(r"-?[0-9]{0,16}(\.[0-9]{0,6})?", fullmatch=True),
)
def test_canonical_decimal_and_integer_text_pass_as_the_full_path_would_give_them(precision, scale, given):
    """The fast path for text already canonical agrees with parsing it (value, or the same problem)."""
    scale = min(scale, precision)

    def outcome(attribute, parse):
        try:
            return parse(attribute, given)
        except ValueProblem as problem:
            return (problem.rule, problem.message)

    def slow_decimal(attribute, value):
        with localcontext():
            return canonical_value(attribute, Decimal(value)) if value and value not in ("-", ".") else None

    decimal = attr(f"decimal({precision},{scale})")
    if given.strip("-.") and given not in ("-", "."):
        fast = outcome(decimal, canonical_value)
        if not isinstance(fast, tuple):
            assert fast == outcome(decimal, slow_decimal)
    integer = attr("integer")
    if "." not in given and given.strip("-"):
        assert outcome(integer, canonical_value) == outcome(integer, lambda a, v: canonical_value(a, int(v)))


_CANONICALIZED = [
    attr("string"),
    attr("text"),
    attr("string", min=Decimal(2), max=Decimal(5)),
    attr("string", pattern="[A-Z]+-[0-9]+"),
    attr("integer"),
    attr("integer", min=Decimal(0), max=Decimal(1000)),
    attr("decimal(10,2)"),
    attr("decimal(4,0)"),
    attr("decimal(10,2)", min=Decimal("-5.5")),
    attr("boolean"),
    attr("enum", values=("low", "high")),
    attr("date"),
]
_RAW = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.from_regex(r"-?[0-9]{1,6}(\.[0-9]{0,3})?", fullmatch=True),
    st.from_regex(r"[A-Z]{1,3}-[0-9]{1,3}", fullmatch=True),
    st.sampled_from(["0", "-0", "00", "-0.00", "1.50", "12.345", "low", "2024-02-29", "99999999999.99"]),
)


def _outcome(step, value):
    try:
        return ("value", step(value))
    except ValueProblem as problem:
        return ("problem", problem.rule, problem.message)


@for_all(st.sampled_from(_CANONICALIZED), _RAW)
def test_canonicalizer_answers_as_canonical_value(attribute, value):
    """An import's per-Attribute step (canonicalizer) gives every value the canonical form, or the
    problem, that canonical_value gives it."""
    assert _outcome(canonicalizer(attribute), value) == _outcome(
        lambda v: canonical_value(attribute, v), value
    )
