"""websec: a website security scanner with an API, a web UI and paid reports."""
