"""The CLI says where the key comes from: `--help` names LOREBASE_KEY, and a 401 tells a CLI user to
set it (the server's own detail speaks of the HTTP header)."""

from __future__ import annotations

import pytest

from lorebase.cli import build_parser
from lorebase.commands._runtime import report_problem
from lorebase.credentials import unknown_credential


def test_help_names_the_key_variable(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    assert "LOREBASE_KEY" in parser.format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(["record", "--help"])
    assert "LOREBASE_KEY" in capsys.readouterr().out


def test_a_401_tells_the_cli_user_to_set_the_variable(capsys: pytest.CaptureFixture[str]) -> None:
    report_problem(unknown_credential(), as_json=False)
    assert "export LOREBASE_KEY=<key>" in capsys.readouterr().err
