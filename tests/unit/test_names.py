"""The name grammar (lorebase.names): every validator refuses a final newline, branch names follow
git's ref rules, and subject tokens are valid and distinct for every string."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lorebase import names
from lorebase.names import branch_pattern_problem, subject_token

VALID_BRANCHES = [
    "main",
    "work-1",
    "agent/agt_risk/q4-audit",
    "release.1",
    "a/_b",
    "a/-b",
    "A" * 200,
    "v1.2.3",
]
INVALID_BRANCHES = [
    "",
    "x//y",
    "nlbr\n",
    "main\n",
    "a\nb",
    "a\x00b",
    "a..b",
    "a/.b",
    ".a",
    "a.",
    "a/b.",
    "a/",
    "/a",
    "a.lock",
    "a/b.lock",
    "-a",
    "a b",
    "a*",
    "a?",
    "a~1",
    "ü",
    "a\tb",
    "A" * 201,
]


@pytest.mark.parametrize("name", VALID_BRANCHES)
def test_valid_branch_names(name: str) -> None:
    assert names.BRANCH.problem(name) is None


@pytest.mark.parametrize("name", INVALID_BRANCHES)
def test_invalid_branch_names_say_why(name: str) -> None:
    problem = names.BRANCH.problem(name)
    assert problem is not None and "branch name" in problem


@pytest.mark.parametrize(
    ("rule", "valid"),
    [
        (names.DOMAIN, "supply"),
        (names.BRANCH, "main"),
        (names.TAG, "v1.0"),
        (names.PRINCIPAL, "agt_risk"),
        (names.TENANT, "acme"),
        (names.CHECKPOINT, "cache:eu-1"),
        (names.SESSION, "sess-1"),
    ],
)
def test_every_rule_refuses_a_final_newline_and_control_characters(rule: names.NameRule, valid: str) -> None:
    assert rule.valid(valid)
    for bad in (valid + "\n", valid + "\r\n", "\n" + valid, valid + "\x00", valid + " ", 7, None):
        assert not rule.valid(bad), (rule.what, bad)


def test_branch_patterns_of_grants() -> None:
    for good in ("*", "main", "agent/*", "feature/?x", "release-*"):
        assert branch_pattern_problem(good) is None, good
    for bad in ("", "x//y", "agent/*/", "a..*", "a\n", "main\n", 3):
        assert branch_pattern_problem(bad) is not None, bad


def test_subject_tokens_keep_the_documented_form() -> None:
    assert subject_token("main") == "main"
    assert subject_token("agent/agt_risk/q4-audit") == "agent.agt_risk.q4-audit"
    assert subject_token("release.1") == "release%2E1"
    # Names from before the grammar still map to valid subjects: empty components and newlines.
    assert subject_token("x//y") == "x.%.y"
    assert subject_token("nl\n") == "nl%0A"


_NATS_TOKEN = re.compile(r"[^\s.*>]+")


@given(st.text(min_size=1, max_size=40))
def test_every_string_maps_to_valid_subject_levels(name: str) -> None:
    token = subject_token(name)
    assert all(_NATS_TOKEN.fullmatch(level) for level in token.split(".")), token
    assert token.isascii()


@given(st.text(max_size=20), st.text(max_size=20))
def test_distinct_names_get_distinct_subjects(a: str, b: str) -> None:
    if a != b:
        assert subject_token(a) != subject_token(b)
