"""`python -m lorebase ...`: the same as the `lorebase` command (how `lorebase up` starts services)."""

from lorebase.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
