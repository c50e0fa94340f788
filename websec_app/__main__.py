"""`python -m websec_app <command>`: see `python -m websec_app --help`."""

from websec_app.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
