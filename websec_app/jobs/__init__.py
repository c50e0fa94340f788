"""Scans as jobs of a distributed task engine (issue 16): see engine.py, and docs/deploy.md for the choice."""
