"""CAA (RFC 8659): the names whose CAA records a certificate authority consults for a host, and what each
record asks of certificate authorities (RFC 8659 4, RFC 8657, and the CA/Browser Forum's Baseline
Requirements 3.2.2.8 for what CAs do with them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "MAX_CAA_NAMES",
    "CaaIssue",
    "caa_names",
    "critical_flag_problem",
    "iodef_problem",
    "parse_issue_value",
]

#: A name rarely has more than 6 labels; past this many, names in the middle of the climb (just below the
#: registrable domain) are left unchecked: a hostile host of a hundred labels must not cost a hundred queries,
#: and the names where CAA records usually are, the registrable domain and its parents, are always asked.
MAX_CAA_NAMES = 10

#: The tags every CA processes (Baseline Requirements 3.2.2.8: "CAs MUST process the issue, issuewild, and iodef
#: property tags"): marked critical, they stop no CA.
PROCESSED_BY_EVERY_CA = frozenset({"issue", "issuewild", "iodef"})
#: The other tags of IANA's CAA property registry in use (RFC 9495's issuemail, the Baseline Requirements'
#: contactemail and contactphone, the VMC requirements' issuevmc): a CA may support them or not, and one that
#: does not must refuse to issue when one is marked critical (RFC 8659 4.1).
REGISTERED_ELSEWHERE = frozenset({"issuemail", "issuevmc", "contactemail", "contactphone"})
#: The tags Let's Encrypt (Boulder's va/caa.go, filterCAA) knows: on any other tag it takes flags bit 1 (value 1),
#: which RFC 8659 4.1 reserves and tells CAs to ignore, for the critical flag, as many publish it by mistake.
_KNOWN_TO_LETS_ENCRYPT = PROCESSED_BY_EVERY_CA | {"issuemail"}
_CRITICAL = 128

# RFC 8659 4.2: label = (ALPHA / DIGIT) *( *("-") (ALPHA / DIGIT)); the parameter tag has the same form.
# Possessive, then a look-behind for the last character: nothing is read twice, however long the value.
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]*+(?<!-))?")
# value = *(%x21-3A / %x3C-7E): printable ASCII but ";", no space.
_PARAMETER_VALUE = re.compile(r"[\x21-\x3a\x3c-\x7e]*+")
# RFC 8657 4: validationmethods' value = [*(label ",") label], label = 1*(ALPHA / DIGIT / "-").
_METHOD = re.compile(r"[A-Za-z0-9-]++")
# RFC 8657 3: accounturi's value is a URI (RFC 3986 3: scheme ":" ...), in the characters a parameter value allows.
_ACCOUNT_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*+:[\x21-\x3a\x3c-\x7e]++")
_WSP = " \t"
_IODEF_SCHEMES = ("mailto", "http", "https")  # RFC 8659 4.4: "These are the only supported URL schemes."


def caa_names(host: str, domain: str) -> list[str]:
    """RFC 8659 3: the relevant RRset is the first non-empty one climbing from the host "up to but
    not including the DNS root", so past the registrable domain: alice.github.io, github.io, io.

    At most MAX_CAA_NAMES, in climbing order: the host and the names below the registrable `domain`, then
    `domain` and its parents, which are always kept; over the cap, the names just below `domain` are
    dropped. A caller can tell that some were by comparing the count with the host's labels."""
    labels = host.rstrip(".").lower().split(".")
    names = [".".join(labels[start:]) for start in range(len(labels))]
    if len(names) <= MAX_CAA_NAMES:
        return names
    domain = domain.rstrip(".").lower()
    top = names[names.index(domain) :] if domain in names else names[-1:]
    return names[: max(MAX_CAA_NAMES - len(top), 1)] + top


@dataclass(frozen=True)
class CaaIssue:
    """An issue or issuewild property value (RFC 8659 4.2, 4.3)."""

    issuer: str | None  # the CA's domain name; None: no CA (";", an empty value, or a value CAs cannot read)
    parameters: tuple[tuple[str, str], ...] = ()
    problem: str | None = None  # why CAs read it as naming no CA, when it does not follow the grammar


def _is_domain_name(text: str) -> bool:
    return all(_LABEL.fullmatch(label) for label in text.split("."))


def _parameter_problem(parameter: str) -> str | None:
    tag, equals, value = parameter.partition("=")
    tag, value = tag.strip(_WSP), value.strip(_WSP)
    if not equals:
        return f"{parameter.strip(_WSP)!r} is not a tag=value parameter"
    if not _LABEL.fullmatch(tag):
        return f"parameter tag {tag!r} is not letters, digits and inner hyphens"
    if not _PARAMETER_VALUE.fullmatch(value):
        return f"the value of {tag} holds a space or a character outside printable ASCII"
    if tag.lower() == "validationmethods" and not value:
        return "validationmethods= lists no validation method, so the CA may use none (RFC 8657 4)"
    if tag.lower() == "validationmethods" and not all(_METHOD.fullmatch(m) for m in value.split(",")):
        return f"validationmethods={value} is not a comma-separated list of method names (RFC 8657 4)"
    if tag.lower() == "accounturi" and not _ACCOUNT_URI.fullmatch(value):
        return f"accounturi={value} is no URI, so it names no account and the CA may issue to none (RFC 8657 3)"
    return None


def parse_issue_value(value: bytes) -> CaaIssue:
    """RFC 8659 4.2's issue-value (issuewild's too, 4.3):
    *WSP [issuer-domain-name *WSP] [";" *WSP [parameters *WSP]]. A value that does not match "MUST be treated
    the same as one specifying an empty issuer-domain-name": it names no CA, and so lets none issue."""
    try:
        text = value.decode("ascii")
    except UnicodeDecodeError:
        return CaaIssue(None, problem="it holds bytes outside ASCII")
    name_part, semicolon, rest = text.partition(";")
    issuer = name_part.strip(_WSP)
    if issuer and not _is_domain_name(issuer):
        why = "a list of names in one record" if any(c in issuer for c in ", ") else "not a domain name"
        return CaaIssue(None, problem=f"{issuer!r} is {why} (one CA's domain name per record)")
    parameters: list[tuple[str, str]] = []
    rest = rest.strip(_WSP)
    if semicolon and rest:
        # ";" cannot appear in a tag or a value, so it separates the parameters; an empty one (";;", a ";" at
        # the end) is none the grammar allows
        for parameter in rest.split(";"):
            problem = _parameter_problem(parameter)
            if problem is not None:
                return CaaIssue(None, problem=problem)
            tag, _, parameter_value = parameter.partition("=")
            parameters.append((tag.strip(_WSP).lower(), parameter_value.strip(_WSP)))
    if sum(tag == "accounturi" for tag, _ in parameters) > 1:
        # RFC 8657 3: a property with more than one accounturi parameter is unsatisfiable (Let's Encrypt refuses it)
        return CaaIssue(
            None,
            problem="it has more than one accounturi parameter, which no account can meet (RFC 8657 3): "
            "one record per account",
        )
    return CaaIssue(issuer or None, tuple(parameters))


def critical_flag_problem(flags: int, tag: str) -> str | None:
    """What the record's flags make CAs do when they stop issuance (RFC 8659 4.1), else None. `tag`: lowercase."""
    if tag in PROCESSED_BY_EVERY_CA:
        return None
    if flags & _CRITICAL and tag in REGISTERED_ELSEWHERE:
        return (
            f"critical tag {tag!r}: a CA that does not support it must refuse to issue (RFC 8659 4.1), and CAs need "
            "only support issue, issuewild and iodef (Baseline Requirements 3.2.2.8)"
        )
    if flags & _CRITICAL:
        return f"unknown critical tag {tag!r}: CAs must refuse to issue (RFC 8659 4.1)"
    if flags & 1 and tag not in _KNOWN_TO_LETS_ENCRYPT:
        return (
            f"flags {flags} on tag {tag!r}: RFC 8659 4.1 has CAs ignore bit 1 (the critical flag is 128), but "
            "Let's Encrypt takes it for the critical flag and refuses to issue"
        )
    return None


def iodef_problem(value: bytes) -> str | None:
    """Why an iodef value is no address a CA can report to (RFC 8659 4.4: a mailto:, http: or https: URL)."""
    text = value.decode("utf-8", "replace").strip()
    scheme, colon, rest = text.partition(":")
    if not colon or scheme.lower() not in _IODEF_SCHEMES or not rest or any(c.isspace() for c in text):
        return f"iodef {text!r} is not a mailto:, http: or https: URL, so no CA can report to it (RFC 8659 4.4)"
    if scheme.lower() != "mailto" and not rest.startswith("//"):
        return f"iodef {text!r} has no host to report to (RFC 8659 4.4)"
    return None
