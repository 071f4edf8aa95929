import pytest

from lorebase.schema import Attribute, Policy, PolicyError, compile_policy

PARAMETERS = {
    "severity": Attribute(name="severity", type="enum", values=("low", "medium", "high", "critical")),
    "risk_score": Attribute(name="risk_score", type="integer"),
    "amount": Attribute(name="amount", type="decimal", precision=10, scale=2),
    "urgent": Attribute(name="urgent", type="boolean"),
    "reason": Attribute(name="reason", type="text"),
    "due": Attribute(name="due", type="date"),
}


def evaluate(source: str, **parameters) -> bool:
    return compile_policy(source, PARAMETERS).evaluate(parameters)


@pytest.mark.parametrize(
    ("source", "parameters", "expected"),
    [
        ("severity == 'critical'", {"severity": "critical"}, True),
        ("severity == 'critical'", {"severity": "low"}, False),
        ("severity == 'critical'", {}, False),
        ("severity != 'critical'", {}, True),
        ("severity in ['high', 'critical']", {"severity": "high"}, True),
        ("severity not in ('high', 'critical')", {"severity": "high"}, False),
        ("risk_score > 80", {"risk_score": "90"}, True),  # canonical integers are strings
        ("risk_score > 80", {"risk_score": "9"}, False),  # compared as numbers, not as text
        ("risk_score >= 80.5", {"risk_score": "81"}, True),
        ("risk_score > -1", {"risk_score": "0"}, True),
        ("risk_score > 80", {}, False),  # absent is None: no ordering
        ("risk_score <= 80", {}, False),
        ("risk_score == null", {}, True),
        ("risk_score == None", {"risk_score": "3"}, False),
        ("risk_score in [1, 2, 3]", {"risk_score": "2"}, True),
        ("amount >= 1000 and severity == 'high'", {"amount": "1000.00", "severity": "high"}, True),
        ("amount >= 1000 or severity == 'high'", {"amount": "999.99", "severity": "low"}, False),
        ("0 < risk_score < 10", {"risk_score": "5"}, True),
        ("0 < risk_score < 10", {"risk_score": "10"}, False),
        ("urgent", {"urgent": True}, True),
        ("not urgent", {"urgent": False}, True),
        ("urgent == true", {"urgent": True}, True),
        ("urgent == True", {"urgent": True}, True),
        ("urgent == 1", {"urgent": True}, False),  # booleans are not numbers
        ("due < '2024-06-01'", {"due": "2024-05-31"}, True),  # canonical dates order as text
        ("'fraud' in reason", {"reason": "possible fraud"}, True),
        ("'fraud' in reason", {}, False),
        ("reason > 3", {"reason": "abc"}, False),  # not a number: no ordering, no error
        (
            "(severity == 'high' or severity == 'critical') and not urgent",
            {"severity": "high", "urgent": False},
            True,
        ),
    ],
)
def test_evaluate(source, parameters, expected):
    assert evaluate(source, **parameters) is expected


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("__import__('os').system('x')", "a call is not allowed"),
        ("len(reason) > 3", "a call is not allowed"),
        ("reason.upper() == 'X'", "a call is not allowed"),
        ("reason.real", "attribute access is not allowed"),
        ("reason[0] == 'a'", "a subscript is not allowed"),
        ("risk_score + 1 > 3", "arithmetic is not allowed"),
        ("(lambda: 1)()", "a call is not allowed"),
        ("lambda: 1", "a lambda is not allowed"),
        ("unknown == 1", "unknown name 'unknown'"),
        ("severity is None", "operator Is is not allowed; compare with == null"),
        ("severity == 'critcal'", "'critcal' is not a value of severity"),
        ("severity in ['high', 'urgent']", "'urgent' is not a value of severity"),
        ("severity in [reason]", "lists in a review policy may hold literals only"),
        ("b'x' == reason", "this literal is not allowed"),
        ("severity ==", "invalid expression"),
        ("x = 1", "invalid expression"),
        ("", "non-empty"),
        ("[x for x in reason]", "ListComp is not allowed"),
        ("{'a': 1}", "Dict is not allowed"),
        ("severity if urgent else reason", "IfExp is not allowed"),
        ("f'{reason}' == 'x'", "JoinedStr is not allowed"),
    ],
)
def test_rejected_at_compile_time(source, message):
    with pytest.raises(PolicyError, match=message.replace("(", r"\(").replace("[", r"\[")):
        compile_policy(source, PARAMETERS)


def test_names_only():
    policy = compile_policy("amount > 100", ["amount"])
    assert policy.evaluate({"amount": "100.50"}) is True
    assert compile_policy("severity == 'anything'", ["severity"]).evaluate({"severity": "anything"}) is True
    with pytest.raises(PolicyError):
        compile_policy("other == 1", ["amount"])


def test_policies_compare_by_source():
    assert compile_policy("urgent", PARAMETERS) == compile_policy("urgent", ["urgent"])
    assert isinstance(compile_policy("urgent", PARAMETERS), Policy)
    assert compile_policy("urgent", PARAMETERS).source == "urgent"
    assert issubclass(PolicyError, ValueError)
