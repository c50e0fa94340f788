"""`python -m websec_app <command>`: see `python -m websec_app --help`."""

from websec_app.cli import run_as_process

if __name__ == "__main__":
    run_as_process()
