"""Service test fixtures: the shared database fixtures and the payment fixtures (tests/payment_fixtures.py)."""

from __future__ import annotations

from tests import db_fixtures, payment_fixtures

database = db_fixtures.database
postgres_database = db_fixtures.postgres_database
any_database = db_fixtures.any_database

razorpay_api = payment_fixtures.razorpay_api
stripe_api = payment_fixtures.stripe_api
smtp_server = payment_fixtures.smtp_server
mailbox = payment_fixtures.mailbox
clock = payment_fixtures.clock
paid_settings = payment_fixtures.paid_settings
service = payment_fixtures.service
worker = payment_fixtures.worker
