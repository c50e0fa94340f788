"""The one check of an email address a buyer types, used by the API's schemas, the use cases and (through
them) the web UI's forms (issue 12).

`email-validator` (https://github.com/JoshData/python-email-validator) checks the syntax of RFC 5321/5322
and RFC 6531 (internationalised addresses are welcome); its deliverability check, which asks DNS, is off:
no network for a form field. On top of the library, the characters that would let an address break out of
a `To:` header or a recipient list are refused outright: control characters (NUL, CR, LF, ...) and
`<>,;"` (the library refuses them too unless quoted local parts are allowed; this says so explicitly).
"""

from __future__ import annotations

import unicodedata

from email_validator import EmailNotValidError, validate_email

#: RFC 5321 section 4.5.3.1.3: a path is at most 256 octets, so an address at most 254 characters.
MAX_LENGTH = 254
_HEADER_BREAKERS = frozenset('<>,;"')


class InvalidEmail(ValueError):
    """Not an email address we will send to."""


def checked_email(value: str) -> str:
    """The address, stripped of surrounding spaces and normalised (domain lowercased, IDNA-checked);
    InvalidEmail otherwise."""
    address = value.strip()
    if not address or len(address) > MAX_LENGTH:
        raise InvalidEmail("it is not an email address")
    if any(ch in _HEADER_BREAKERS or unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") for ch in address):
        raise InvalidEmail("it is not an email address")
    try:
        result = validate_email(
            address,
            check_deliverability=False,  # no DNS lookups
            allow_quoted_local=False,
            allow_domain_literal=False,
            allow_display_name=False,
        )
    except EmailNotValidError:
        raise InvalidEmail("it is not an email address") from None
    return result.normalized


def ascii_form(address: str) -> str | None:
    """The address as plain SMTP carries it, its domain in IDNA (`b@bücher.example` -> `b@xn--bcher-kva.example`),
    or None when its local part is not ASCII: such an address needs a server that offers SMTPUTF8 (RFC 6531)."""
    if address.isascii():
        return address
    try:
        result = validate_email(address, check_deliverability=False, allow_quoted_local=False)
    except EmailNotValidError:
        return None
    ascii_email: str | None = result.ascii_email
    return ascii_email


__all__ = ["MAX_LENGTH", "InvalidEmail", "ascii_form", "checked_email"]
