"""SPF (RFC 7208): parse a record, and evaluate a domain's policy from the DNS snapshot.

The evaluation counts the DNS-querying terms as a receiver would (section 4.6.4: include,
a, mx, ptr, exists and redirect, at most 10 in the whole evaluation, recursively through
include and redirect), and follows include/redirect into the records the fetch layer
collected. It also applies the other limits of 4.6.4 that the published records decide:
an mx mechanism whose name has more than 10 MX records is a permerror, and so are more than
2 void lookups (terms whose query finds NXDOMAIN or no records). The fetch layer uses
`referenced_domains` and `term_queries` to know which records to collect.

Every term is evaluated, as for a sender that matches none of them: that is the evaluation
forged mail gets, and the one a legitimate sender listed last gets.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

from ..snapshot import DnsAnswer, DnsSnapshot
from ._dns_text import failed, is_domain_name, txt_of

LOOKUP_LIMIT = 10  # RFC 7208 4.6.4
VOID_LOOKUP_LIMIT = 2  # RFC 7208 4.6.4: "SHOULD limit void lookups to two", more is a permerror
MX_RECORD_LIMIT = 10  # RFC 7208 4.6.4 and 5.4: more MX records than this make the mx mechanism a permerror
_MAX_DEPTH = 12  # past the limit anyway; guards against include loops in what we fetched

_QUALIFIERS = "+-~?"
_MECHANISMS = ("all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists")
_LOOKUP_TERMS = ("include", "a", "mx", "ptr", "exists", "redirect")
_MODIFIER_NAME = re.compile(r"^[a-z][a-z0-9_.-]*$", re.IGNORECASE)
# RFC 7208 7.1: %{letter digits r delimiters}, %%, %_, %-
_MACRO = re.compile(r"%(?:\{[slodiphcrtv][0-9]*r?[.\-+,/_=]*\}|%|_|-)", re.IGNORECASE)
_ALL_RESULTS = {"+": "pass", "-": "fail", "~": "softfail", "?": "neutral"}


@dataclass(frozen=True)
class SpfTerm:
    qualifier: str  # "+", "-", "~", "?" ("" for modifiers)
    name: str  # mechanism or modifier name, lowercase
    value: str | None  # the domain-spec / network after ":" or "="
    modifier: bool = False


@dataclass(frozen=True)
class SpfRecord:
    text: str
    terms: tuple[SpfTerm, ...] = ()
    errors: tuple[str, ...] = ()

    def mechanisms(self) -> list[SpfTerm]:
        return [t for t in self.terms if not t.modifier]

    def modifier(self, name: str) -> SpfTerm | None:
        return next((t for t in self.terms if t.modifier and t.name == name), None)

    @property
    def all_term(self) -> SpfTerm | None:
        return next((t for t in self.terms if not t.modifier and t.name == "all"), None)

    @property
    def redirect(self) -> str | None:
        """RFC 7208 6.1: redirect is ignored when the record has an "all" mechanism."""
        term = self.modifier("redirect")
        return term.value if term is not None and self.all_term is None else None


def is_spf(text: str) -> bool:
    """RFC 7208 4.5: a record starts with exactly "v=spf1" followed by a space or the end."""
    return text[:6].lower() == "v=spf1" and (len(text) == 6 or text[6] == " ")


def spf_texts(txt_values: list[str]) -> list[str]:
    return [t for t in txt_values if is_spf(t)]


def _domain_spec_problem(spec: str) -> str | None:
    """RFC 7208 7.1: domain-spec = macro-string domain-end; without macros it must be a host name."""
    if not spec:
        return "an empty domain"
    stripped = _MACRO.sub("x", spec)
    if "%" in stripped:
        return f"a malformed macro in {spec!r}"
    if stripped == spec and not is_domain_name(spec):
        return f"{spec!r} is not a domain name"
    return None


def _split_cidr(value: str) -> tuple[str, str]:
    if "/" in value:
        head, _, tail = value.partition("/")
        return head, "/" + tail
    return value, ""


def _dual_cidr_ok(cidr: str) -> bool:
    """ip4-cidr-length [ "/" ip6-cidr-length ], i.e. "/24", "//64", "/24//64" (RFC 7208 5.6)."""
    match = re.fullmatch(r"(?:/(\d{1,2}))?(?://(\d{1,3}))?", cidr)
    if not match:
        return False
    four, six = match.groups()
    return (four is None or int(four) <= 32) and (six is None or int(six) <= 128)


def _mechanism_problem(name: str, value: str | None) -> str | None:
    if name == "all":
        return "'all' takes no argument" if value is not None else None
    if name in ("include", "exists"):
        return f"'{name}' needs a domain" if not value else _domain_spec_problem(value)
    if name in ("a", "mx", "ptr"):
        if value is None:
            return None
        spec, cidr = _split_cidr(value) if name != "ptr" else (value, "")
        if cidr and not _dual_cidr_ok(cidr):
            return f"bad prefix length in '{name}:{value}'"
        return _domain_spec_problem(spec) if spec else None
    if name in ("ip4", "ip6"):
        if not value:
            return f"'{name}' needs a network"
        try:
            network = ipaddress.ip_network(value, strict=False)
        except ValueError:
            return f"{value!r} is not an {name} network"
        if (name == "ip4") != (network.version == 4):
            return f"{value!r} is not an {name} network"
        return None
    return f"unknown mechanism '{name}'"


def parse_spf(text: str) -> SpfRecord:
    """Parse one record (which must start with v=spf1). Errors are what RFC 7208 calls permerror."""
    terms: list[SpfTerm] = []
    errors: list[str] = []
    for raw in text.split(" ")[1:]:
        if not raw:
            continue  # 1*SP between terms
        head = re.match(r"^([a-z][a-z0-9_.-]*)=(.*)$", raw, re.IGNORECASE)
        if head and head.group(1).lower() not in _MECHANISMS:
            name, value = head.group(1).lower(), head.group(2)
            if not _MODIFIER_NAME.match(name):
                errors.append(f"bad modifier name in {raw!r}")
            if name in ("redirect", "exp"):
                if any(t.modifier and t.name == name for t in terms):
                    errors.append(f"'{name}' appears more than once")  # RFC 7208 6
                problem = _domain_spec_problem(value)
                if problem:
                    errors.append(f"{name}: {problem}")
            terms.append(SpfTerm("", name, value, modifier=True))
            continue
        qualifier = raw[0] if raw[0] in _QUALIFIERS else "+"
        body = raw[1:] if raw[0] in _QUALIFIERS else raw
        name, sep, value = body.partition(":")
        if not sep and "/" in name:  # "a/24", "mx//64"
            name, _, cidr = name.partition("/")
            value, sep = "/" + cidr, ":"
            if name.lower() not in ("a", "mx"):
                errors.append(f"unknown mechanism in {raw!r}")
                continue
        name = name.lower()
        problem = _mechanism_problem(name, value if sep else None)
        if problem:
            errors.append(problem)
            continue
        terms.append(SpfTerm(qualifier, name, value if sep else None))
    return SpfRecord(text, tuple(terms), tuple(errors))


def strict_record(text: str) -> str:
    """The same record ending in "-all" instead of another "all" (or with "-all" added after the
    mechanisms). A record that delegates with redirect= is returned unchanged: its "all" lives in
    the record it points to, and adding one here would cancel the redirect (RFC 7208 6.1)."""
    words = text.split()
    if any(w.lower().startswith("redirect=") for w in words):
        return text
    mechanisms = [w for w in words[1:] if "=" not in w.split(":")[0]]
    modifiers = [w for w in words[1:] if "=" in w.split(":")[0]]
    kept = [w for w in mechanisms if w.lstrip("+-~?").lower() != "all"]
    return " ".join([words[0] if words else "v=spf1", *kept, "-all", *modifiers])


def referenced_domains(record: SpfRecord) -> list[str]:
    """Domains whose SPF records the evaluation needs: include targets and the redirect target,
    when they contain no macros (those depend on the sender and cannot be resolved ahead)."""
    names = [t.value for t in record.mechanisms() if t.name == "include" and t.value]
    if record.redirect:
        names.append(record.redirect)
    return [n.rstrip(".").lower() for n in names if "%" not in n]


def _term_target(term: SpfTerm, domain: str) -> str | None:
    """The name an a, mx or exists term queries: its domain-spec without the prefix lengths, or the
    domain of the record it is in (RFC 7208 5.3, 5.4); None when it holds macros (they depend on
    the sender and cannot be resolved ahead)."""
    value = term.value or ""
    spec = value if term.name == "exists" else _split_cidr(value)[0]
    if "%" in spec:
        return None
    return (spec or domain).rstrip(".").lower()


def term_queries(record: SpfRecord, domain: str) -> list[tuple[str, str]]:
    """The (name, type) queries the a, mx and exists mechanisms of `record` (published at
    `domain`) make, for the limits on MX records and void lookups. `a` asks A or AAAA depending
    on the sender's address, so both; `exists` always asks A (RFC 7208 5.7); ptr depends on the
    sender's address and is left out."""
    queries: list[tuple[str, str]] = []
    for term in record.mechanisms():
        if term.name not in ("a", "mx", "exists"):
            continue
        target = _term_target(term, domain)
        if target is None:
            continue
        types = {"a": ("A", "AAAA"), "mx": ("MX",), "exists": ("A",)}[term.name]
        queries += [(target, rdtype) for rdtype in types]
    return list(dict.fromkeys(queries))


@dataclass
class SpfEvaluation:
    domain: str
    record: str | None = None  # the domain's own record text
    records_found: int = 0
    lookups: int = 0
    errors: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # includes we could not look at (failed, not fetched)
    all_qualifier: str | None = None  # of the record that decides ("-" for "-all"); None: no all, no redirect
    uses_ptr: bool = False
    macros: bool = False
    counting_stopped: bool = False  # past the limit, includes were not walked further
    limit_errors: list[str] = field(default_factory=list)  # other 4.6.4 permerrors (MX records per mx)
    void_names: list[str] = field(default_factory=list)  # the names of the void lookups, in order

    @property
    def result_for_others(self) -> str:
        """What a receiver concludes for a host the record does not list (RFC 7208 4.7)."""
        return _ALL_RESULTS.get(self.all_qualifier or "?", "neutral")

    @property
    def over_limit(self) -> bool:
        """Past a lookup limit of RFC 7208 4.6.4 (10 terms, or 10 MX records for one mx): permerror."""
        return self.lookups > LOOKUP_LIMIT or bool(self.limit_errors)

    @property
    def void_lookups(self) -> int:
        return len(self.void_names)

    @property
    def over_void_limit(self) -> bool:
        return self.void_lookups > VOID_LOOKUP_LIMIT


def _void(answer: DnsAnswer | None) -> bool | None:
    """RFC 7208 4.6.4: a void lookup is NOERROR with no answers, or NXDOMAIN; None when unknown."""
    if answer is None or failed(answer):
        return None
    return answer.rcode == "NXDOMAIN" or not answer.records


def _apply_term_limits(record: SpfRecord, domain: str, snapshot: DnsSnapshot, result: SpfEvaluation) -> None:
    """MX records per mx mechanism and void lookups, from the answers the fetch layer collected.

    An `a` term asks A for an IPv4 sender and AAAA for an IPv6 one; it is counted void only when
    it is void for both (NXDOMAIN, or neither type has records), so the count holds for every
    sender. Terms whose answers were not fetched or failed are not counted."""
    for term in record.mechanisms():
        if term.name not in ("a", "mx", "exists"):
            continue
        target = _term_target(term, domain)
        if target is None:
            continue
        if term.name == "mx":
            answer = snapshot.get(target, "MX")
            void = _void(answer)
            count = len(answer.records) if answer is not None and not void else 0
            if count > MX_RECORD_LIMIT:
                result.limit_errors.append(
                    f"the mx mechanism for {target} finds {count} MX records: more than {MX_RECORD_LIMIT} "
                    "is a permerror (RFC 7208 4.6.4)"
                )
        elif term.name == "exists":
            void = _void(snapshot.get(target, "A"))
        else:
            four, six = snapshot.get(target, "A"), snapshot.get(target, "AAAA")
            # NXDOMAIN is about the name, so it is void for either family (RFC 8020)
            nxdomain = any(x is not None and x.rcode == "NXDOMAIN" for x in (four, six))
            void = nxdomain or (_void(four) is True and _void(six) is True)
        if void:
            result.void_names.append(target)


def _walk(domain: str, snapshot: DnsSnapshot, result: SpfEvaluation, path: tuple[str, ...], top: bool) -> None:
    if len(path) > _MAX_DEPTH or result.lookups > LOOKUP_LIMIT:
        result.counting_stopped = True  # a receiver stops at the limit too; the rest is not counted
        return
    answer = snapshot.get(domain, "TXT")
    if answer is None or failed(answer):
        result.unknown.append(domain)
        return
    texts = spf_texts(txt_of(answer))
    if not texts:
        if not top:
            # RFC 7208 5.2: include of a domain without an SPF record is a permerror.
            result.errors.append(f"{domain} (included from {path[-1]}) has no SPF record")
        return
    if len(texts) > 1:
        if not top:
            result.errors.append(f"{domain} has {len(texts)} SPF records")  # RFC 7208 4.5: permerror
        return
    record = parse_spf(texts[0])
    if top:
        result.record = texts[0]
    for error in record.errors:
        result.errors.append(error if top else f"{domain}: {error}")
    for term in record.terms:
        if term.name in _LOOKUP_TERMS and (not term.modifier or term.name == "redirect"):
            if term.name == "redirect" and record.all_term is not None:
                continue
            result.lookups += 1
        if term.name == "ptr" and not term.modifier:
            result.uses_ptr = True
        if term.value and "%" in term.value:
            result.macros = True
    _apply_term_limits(record, domain, snapshot, result)
    if top:
        all_term = record.all_term
        result.all_qualifier = all_term.qualifier if all_term else None
    for target in referenced_domains(record):
        if target in path:
            result.errors.append(f"{target} includes itself (a loop through {' -> '.join(path)})")
            continue
        is_redirect = target == (record.redirect or "").rstrip(".").lower()
        _walk(target, snapshot, result, (*path, target), top=False)
        if is_redirect and top:
            # RFC 7208 6.1: the redirected record's result is the result; its "all" decides.
            redirected = snapshot.get(target, "TXT")
            texts = spf_texts(txt_of(redirected))
            if len(texts) == 1:
                inner = parse_spf(texts[0])
                result.all_qualifier = inner.all_term.qualifier if inner.all_term else None


def evaluate_spf(domain: str, snapshot: DnsSnapshot) -> SpfEvaluation | None:
    """None when the domain's TXT records were not fetched."""
    answer = snapshot.get(domain, "TXT")
    if answer is None:
        return None
    result = SpfEvaluation(domain)
    texts = spf_texts(txt_of(answer))
    result.records_found = len(texts)
    if len(texts) != 1:
        return result
    _walk(domain, snapshot, result, (domain,), top=True)
    return result
