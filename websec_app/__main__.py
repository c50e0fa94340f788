"""`python -m websec_app <command>`: see `python -m websec_app --help`."""

from websec_app import startup_regex

# First: the command line's own modules (argparse, logging, ...) then take their patterns' code from the cache too.
startup_regex.install()

from websec_app.cli import run_as_process  # noqa: E402

if __name__ == "__main__":
    run_as_process()
