"""SPF records (RFC 7208): parse a record into its terms, and name what its terms query.

`parse_spf` follows the grammar of section 12 and reports what section 4.6 calls a permerror
(unknown mechanisms, malformed domain-specs, bad prefix lengths, repeated modifiers).
`term_target` and `mx_exchanges` name what a term looks up, through the names `expand_domain_spec` gives a
domain-spec whose macros are the same for every sender (7.3: d, o and the escapes); `sender_chosen_zone` says when
the sender's own values (its HELO name, local part, address) pick the zone that answers for a name; the evaluation
itself, with its limits (4.6.4), which the fetch layer follows to know what to ask and the `dns` check reads, is
records/spf_evaluation.py's.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from urllib.parse import quote

from ..registrable import is_known_public_suffix

__all__ = [
    "MX_RECORD_LIMIT",
    "SENDER_MACROS",
    "SenderChosenZone",
    "SpfRecord",
    "SpfTerm",
    "expand_domain_spec",
    "is_spf",
    "mx_exchanges",
    "parse_spf",
    "prefix_lengths",
    "redirect_as_include",
    "sender_chosen_zone",
    "spf_texts",
    "strict_record",
    "term_domain_spec",
    "term_target",
    "uses_sender_macros",
    "with_qualifier",
    "without_term",
]

#: RFC 7208 4.6.4 and 5.4: more MX records than this make the mx mechanism a permerror, its hosts never looked up
MX_RECORD_LIMIT = 10
_QUALIFIERS = "+-~?"
_MECHANISMS = ("all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists")
_MODIFIER_NAME = re.compile(r"^[a-z][a-z0-9_.-]*$", re.IGNORECASE)
# name "=" value: a modifier, unless the name is a mechanism's ("a=b" is an unknown mechanism). Compiled once:
# re.match with flags looked the pattern up again for each term, half the cost of a record of 30,000 terms.
_MODIFIER = re.compile(r"^([a-z][a-z0-9_.-]*)=(.*)$", re.IGNORECASE)
# RFC 7208 7.1: %{letter digits r delimiters}, %%, %_, %-. c, r and t are allowed only in "exp" text (7.2), the
# explanation the exp= modifier's TXT record holds: never in a domain-spec, exp='s own included (the RFC 7208
# test suite's exp-only-macro-char, pyspf). An unknown modifier's value is a macro-string, never expanded.
_MACRO = re.compile(r"%(?:\{[slodiphcrtv][0-9]*r?[.\-+,/_=]*\}|%|_|-)", re.IGNORECASE)
_DOMAIN_MACRO = re.compile(r"%(?:\{[slodiphv][0-9]*r?[.\-+,/_=]*\}|%|_|-)", re.IGNORECASE)
_ENDS_WITH_DOMAIN_MACRO = re.compile(r"(?:%\{[slodiphv][0-9]*r?[.\-+,/_=]*\}|%%|%_|%-)$", re.IGNORECASE)
# RFC 7208 7.1, 7.3: one macro-expand in a domain-spec, its letter, digits, "r" and delimiters, or an escape
_MACRO_PARTS = re.compile(r"%(?:\{([a-z])([0-9]*)(r?)([.\-+,/_=]*)\}|([%_-]))", re.IGNORECASE)
_ESCAPES = {"%": "%", "_": " ", "-": "%20"}
#: RFC 7208 7.3: the macro letters of a domain-spec whose values the sender gives: its address (s, l@o), that
#: address's local part (l), the address it sends from (i), the validated name of that address (p), its HELO name (h),
#: and "in-addr" or "ip6" by that address's family (v). Only d and o are the same for every sender.
SENDER_MACROS = frozenset("slipvh")
#: The characters of a label a zone under a public suffix can be delegated for, and of a top-level name: letters,
#: digits, hyphens (RFC 1123 2.1, RFC 3696 2)
_HOST_LABEL = re.compile(r"[a-z0-9-]*")
# RFC 7208 7.1: toplabel = ( *alphanum ALPHA *alphanum ) / ( 1*alphanum "-" *( alphanum / "-" ) alphanum ).
# Written possessive, each run read once: the ABNF's own shape (`[0-9A-Za-z]*[A-Za-z][0-9A-Za-z]*`) tried every
# letter as the one ALPHA and read the rest again, quadratic in a long label that does not match ("a." + 32 KB
# of "a" + "!" took 2 s, on the event loop, as fetch/dns.py parses the records it follows).
_TOPLABEL = re.compile(r"[0-9]*+[A-Za-z][0-9A-Za-z]*+|[0-9A-Za-z]++-[0-9A-Za-z-]*+(?<=[0-9A-Za-z])")
# RFC 7208 7.1: macro-literal = %x21-24 / %x26-7E, the visible characters but "%"
_NOT_VISIBLE = re.compile(r"[^\x21-\x7e]")
# a and mx: the prefix lengths that end the value ("/24", "//64", "/24//64")
_TRAILING_CIDR = re.compile(r"(?:/[0-9]+)?(?://[0-9]+)?$")
_IP4_CIDR_LENGTH = re.compile(r"0|[1-9][0-9]?")
_IP6_CIDR_LENGTH = re.compile(r"0|[1-9][0-9]{0,2}")


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

    def evaluated_mechanisms(self) -> list[SpfTerm]:
        """The mechanisms a receiver tests: those up to the first "all". RFC 7208 5.1: the ones
        after it are never tested and MUST be ignored (their syntax still counts, 4.6)."""
        tested = []
        for term in self.mechanisms():
            tested.append(term)
            if term.name == "all":
                break
        return tested

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


def _macro_string_problem(text: str, macro: re.Pattern[str]) -> str | None:
    """RFC 7208 7.1: macro-string = *( macro-expand / macro-literal ): every "%" starts a macro `macro` reads,
    every other character is a visible one."""
    literal = macro.sub("", text)
    if "%" in literal:
        if macro is _DOMAIN_MACRO and "%" not in _MACRO.sub("", text):
            return f"{text!r} uses a macro letter (c, r or t) allowed only in explanation text (RFC 7208 7.2)"
        return f"a malformed macro in {text!r}"
    if _NOT_VISIBLE.search(literal):
        return f"{text!r} holds a character that is not visible ASCII"
    return None


def _domain_spec_problem(spec: str) -> str | None:
    """RFC 7208 7.1: domain-spec = macro-string domain-end, domain-end = ( "." toplabel [ "." ] ) / macro-expand.
    The labels before the last may hold any visible character ("foo:bar/baz.example.com" is a domain-spec);
    without macros, labels are not empty and the name fits in the DNS (63 and 253 octets)."""
    if not spec:
        return "an empty domain"
    problem = _macro_string_problem(spec, _DOMAIN_MACRO)
    if problem:
        return problem
    if _ENDS_WITH_DOMAIN_MACRO.search(spec):
        return None
    name = spec[:-1] if spec.endswith(".") else spec
    rest, dot, toplabel = name.rpartition(".")
    if not dot or not rest or not _TOPLABEL.fullmatch(toplabel):
        return f"{spec!r} is not a domain name"
    if "%" not in spec and (len(name) > 253 or any(not 0 < len(label) <= 63 for label in name.split("."))):
        return f"{spec!r} is not a domain name"
    return None


def _split_cidr(value: str) -> tuple[str, str]:
    """An a or mx value's domain-spec and the prefix lengths after it. Only a trailing "/24", "//64" or
    "/24//64" is a prefix length: a "/" before it belongs to the domain-spec (RFC 7208 12, the RFC 7208 test
    suite's a-colon-domain: a:foo:bar/baz.example.com)."""
    start = _TRAILING_CIDR.search(value)
    cut = start.start() if start else len(value)
    return value[:cut], value[cut:]


def _cidr_length_ok(length: str, version: int) -> bool:
    """RFC 7208 12: ip4-cidr-length = "/" ("0" / %x31-39 0*1DIGIT), 0 to 32; ip6-cidr-length = "/" ("0" /
    %x31-39 0*2DIGIT), 0 to 128. A number of ASCII digits with no leading zero: no netmask ("/255.255.255.0")."""
    pattern, top = (_IP4_CIDR_LENGTH, 32) if version == 4 else (_IP6_CIDR_LENGTH, 128)
    return bool(pattern.fullmatch(length)) and int(length) <= top


def _dual_cidr_ok(cidr: str) -> bool:
    """ip4-cidr-length [ "/" ip6-cidr-length ], i.e. "/24", "//64", "/24//64" (RFC 7208 5.6)."""
    match = re.fullmatch(r"(?:/([0-9]+))?(?://([0-9]+))?", cidr)
    if not match:
        return False
    four, six = match.groups()
    return (four is None or _cidr_length_ok(four, 4)) and (six is None or _cidr_length_ok(six, 6))


def prefix_lengths(term: SpfTerm) -> tuple[int, int]:
    """The IPv4 and IPv6 prefix lengths an a or mx term compares the sender's address with (RFC 7208 5.6: 32 and
    128 when not given). For a term that parsed: its lengths are valid."""
    match = re.fullmatch(r"(?:/([0-9]+))?(?://([0-9]+))?", _split_cidr(term.value or "")[1])
    four, six = match.groups() if match else (None, None)
    return (32 if four is None else int(four)), (128 if six is None else int(six))


def _network_problem(name: str, value: str) -> str | None:
    """ip4-network or ip6-network, then an optional prefix length (RFC 7208 5.6, 12). Checked against the
    grammar, not with ipaddress.ip_network, which also reads netmasks, host masks, leading zeros and IPv6
    zones ("%eth0"): the grammar has none of them, so a receiver returns permerror (RFC 7208 4.6; the RFC
    7208 test suite's cidr4-032, pyspf)."""
    version = 4 if name == "ip4" else 6
    address, slash, length = value.partition("/")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return f"{value!r} is not an {name} network"
    if parsed.version != version or "%" in address:  # RFC 4291 2.2's text form has no zone
        return f"{value!r} is not an {name} network"
    if slash and not _cidr_length_ok(length, version):
        return f"bad prefix length in '{name}:{value}'"
    return None


def _mechanism_problem(name: str, value: str | None, *, colon: bool = True) -> str | None:
    """`colon`: the value came after ":" ("a:/24"), not straight after the name ("a/24")."""
    if name == "all":
        return "'all' takes no argument" if value is not None else None
    if name in ("include", "exists"):
        return f"'{name}' needs a domain" if not value else _domain_spec_problem(value)
    if name in ("a", "mx", "ptr"):
        if value is None:
            return None
        if not colon:  # "a/24//64": prefix lengths alone
            return None if _dual_cidr_ok(value) else f"bad prefix length in '{name}{value}'"
        spec, cidr = _split_cidr(value) if name != "ptr" else (value, "")
        if cidr and not _dual_cidr_ok(cidr):
            return f"bad prefix length in '{name}:{value}'"
        if colon and not spec:  # RFC 7208 12: ":" is followed by a domain-spec, never by nothing
            return f"'{name}:' needs a domain after the colon"
        return _domain_spec_problem(spec) if spec else None
    if name in ("ip4", "ip6"):
        if not value:
            return f"'{name}' needs a network"
        return _network_problem(name, value)
    return f"unknown mechanism '{name}'"


def parse_spf(text: str) -> SpfRecord:
    """Parse one record (which must start with v=spf1). Errors are what RFC 7208 calls permerror."""
    terms: list[SpfTerm] = []
    errors: list[str] = []
    # redirect and exp seen so far: a set, as the terms before each were searched again (quadratic: 8,000
    # x=1 then 4,000 exp= in a 64 KB record took 0.8 s, on the event loop while fetch/dns.py follows includes)
    seen: set[str] = set()
    for raw in text.split(" ")[1:]:
        if not raw:
            continue  # 1*SP between terms
        head = _MODIFIER.match(raw)
        if head and head.group(1).lower() not in _MECHANISMS:
            name, value = head.group(1).lower(), head.group(2)
            if not _MODIFIER_NAME.match(name):
                errors.append(f"bad modifier name in {raw!r}")
            if name in ("redirect", "exp"):
                if name in seen:
                    errors.append(f"'{name}' appears more than once")  # RFC 7208 6
                seen.add(name)
                problem = _domain_spec_problem(value)
            else:  # RFC 7208 6, 12: unknown-modifier = name "=" macro-string; ignored, but its syntax counts
                problem = _macro_string_problem(value, _MACRO)
            if problem:
                errors.append(f"{name}: {problem}")
            terms.append(SpfTerm("", name, value, modifier=True))
            continue
        qualifier = raw[0] if raw[0] in _QUALIFIERS else "+"
        body = raw[1:] if raw[0] in _QUALIFIERS else raw
        name, sep, value = body.partition(":")
        colon = bool(sep)
        if not sep and "/" in name:  # "a/24", "mx//64"
            name, _, cidr = name.partition("/")
            value, sep = "/" + cidr, ":"
            if name.lower() not in ("a", "mx"):
                errors.append(f"unknown mechanism in {raw!r}")
                continue
        name = name.lower()
        problem = _mechanism_problem(name, value if sep else None, colon=colon)
        if problem:
            errors.append(problem)
            continue
        terms.append(SpfTerm(qualifier, name, value if sep else None))
    return SpfRecord(text, tuple(terms), tuple(errors))


def strict_record(text: str) -> str:
    """The same record ending in "-all" instead of another "all" (or with "-all" added after the
    mechanisms). Mechanisms after the first "all" are dropped: receivers never test them (RFC 7208
    5.1), and moving them before "-all" would authorise senders the owner never did. A record that
    delegates with redirect= (and has no "all") is returned unchanged: its "all" lives in the record
    it points to, and adding one here would cancel the redirect (RFC 7208 6.1)."""
    words = text.split()
    mechanisms = [w for w in words[1:] if "=" not in w.split(":")[0]]
    modifiers = [w for w in words[1:] if "=" in w.split(":")[0]]
    first_all = next((i for i, w in enumerate(mechanisms) if w.lstrip("+-~?").lower() == "all"), None)
    if first_all is None and any(w.lower().startswith("redirect=") for w in modifiers):
        return text
    kept = mechanisms if first_all is None else mechanisms[:first_all]
    return " ".join([words[0] if words else "v=spf1", *kept, "-all", *modifiers])


def without_term(text: str, term: SpfTerm) -> str:
    """The same record without the mechanism `term` (each word that parses to it)."""
    words = text.split()
    kept = [w for w in words[1:] if not _written_as(w, term)]
    return " ".join([words[0] if words else "v=spf1", *kept])


def with_qualifier(text: str, term: SpfTerm, qualifier: str) -> str:
    """The same record with the mechanism `term` (each word that parses to it) given `qualifier` ("-")."""
    words = text.split()
    changed = [qualifier + w.lstrip("+-~?") if _written_as(w, term) else w for w in words[1:]]
    return " ".join([words[0] if words else "v=spf1", *changed])


def _written_as(word: str, term: SpfTerm) -> bool:
    """`word` of a record is `term` (its value first looked for, as a word is parsed only then)."""
    return (term.value is None or term.value in word) and parse_spf(f"v=spf1 {word}").terms == (term,)


def redirect_as_include(text: str) -> str:
    """The same record with its redirect= made an include: of the same name after the mechanisms, and no
    "all": for a record delegating to another organisation's, whose "all" its owner cannot change. The
    senders the other record lists still pass (an include matches when the included record passes, RFC
    7208 5.2), strict_record then adds the "all" that decides for the others, and the lookups are as
    many (4.6.4). A record with no redirect= is returned unchanged."""
    words = text.split()
    redirect = next((w for w in words[1:] if w.lower().startswith("redirect=")), None)
    if redirect is None:
        return text
    mechanisms = [w for w in words[1:] if "=" not in w.split(":")[0]]
    modifiers = [w for w in words[1:] if "=" in w.split(":")[0] and w is not redirect]
    included = "include:" + redirect.partition("=")[2]
    return " ".join([words[0], *mechanisms, included, *modifiers])


def expand_domain_spec(spec: str, domain: str, sender_domain: str) -> str | None:
    """The name `spec` stands for in the record of `domain`, evaluated for mail whose sender's address is at
    `sender_domain` (the scanned domain, through every include and redirect), lowercase and without the final dot.

    RFC 7208 7.3: %{d} is `domain` and %{o} `sender_domain`, split on the delimiters ("." by default), reversed
    with "r", the rightmost parts kept by the digits, joined with "."; an uppercase letter's value is URL-escaped;
    %%, %_ and %- are "%", " " and "%20"; a name past 253 characters loses labels on its left until it fits. These
    are the same for every sender claiming the domain. None when `spec` holds a macro whose value depends on the
    sender (s, l, i, p, v, h) or a DIGIT of 0 (7.3: it MUST be nonzero), or expands to a name no query can carry
    (an empty label, one past 63 octets). A spec without macros is returned as written."""
    if "%" not in spec:
        return spec.rstrip(".").lower()
    parts: list[str] = []
    end = 0
    for match in _MACRO_PARTS.finditer(spec):
        letter, digits, reverse, delimiters, escape = match.groups()
        parts.append(spec[end : match.start()])
        end = match.end()
        if escape:
            parts.append(_ESCAPES[escape])
            continue
        if letter.lower() not in ("d", "o") or (digits and int(digits) == 0):
            return None
        value = domain if letter.lower() == "d" else sender_domain
        parts.append(_transformed(value, letter, digits, reverse, delimiters))
    parts.append(spec[end:])
    name = "".join(parts).rstrip(".").lower()
    if len(name) > 253:  # the first label boundary leaving at most 253 characters, found once: a 64 KB spec of
        # %{d} expands to 4 MB, and dropping its labels one by one copied the rest each time
        dot = name.find(".", len(name) - 254)
        name = name[dot + 1 :] if dot >= 0 else name
    if len(name) > 253 or any(not 0 < len(label) <= 63 for label in name.split(".")):
        return None
    return name


def _split_value(value: str, delimiters: str, reverse: str) -> list[str]:
    """RFC 7208 7.3: a macro's value split on its delimiters ("." by default), reversed with "r"."""
    pieces = re.split(f"[{re.escape(delimiters or '.')}]", value)
    if reverse:
        pieces.reverse()
    return pieces


def _transformed(value: str, letter: str, digits: str, reverse: str, delimiters: str) -> str:
    """RFC 7208 7.3: a macro's value split, reversed, its rightmost parts kept by the digits (nonzero), joined with
    "."; URL-escaped for an uppercase letter."""
    pieces = _split_value(value.rstrip("."), delimiters, reverse)
    expanded = ".".join(pieces[-int(digits) :] if digits else pieces)
    return quote(expanded, safe="-._~") if letter.isupper() else expanded


def uses_sender_macros(spec: str) -> bool:
    """Whether `spec` holds a macro whose value the sender gives (`SENDER_MACROS`)."""
    return any(letter and letter.lower() in SENDER_MACROS for letter, *_ in _MACRO_PARTS.findall(spec))


@dataclass(frozen=True)
class SenderChosenZone:
    """How the sender picks the zone that answers for a name: the macro whose value supplies the name's rightmost
    labels, or its label directly under a public suffix (`suffix`, "" when the sender gives the whole name)."""

    letter: str  # "h", "l", "s", "p" or "i", lowercase
    suffix: str


def sender_chosen_zone(spec: str, domain: str, sender_domain: str, family: str) -> SenderChosenZone | None:
    """Whether a sender of `family` ("IPv4", "IPv6") picks the zone that answers for the name `spec` expands to in the
    record of `domain` (mail from `sender_domain`), and through which macro: the labels that decide which zone
    answers, the rightmost ones down to the first under a public suffix, come from the sender's own values (RFC 7208
    7.3, 11.5: its HELO name, local part, address, and its address's validated name, none checked by receivers). So
    "%{h}", "%{h2r}", "%{l}.com", "%{l}.duckdns.org" or "%{ir}.%{v}.arpa" (the sender's reverse zone) name a zone
    of the sender's choosing, where it can publish what makes the term match it. None for a name whose rightmost
    labels hold a registrable domain of fixed text ("%{i}._spf.%{d}", "%{l}.example.com": the zone of the record's
    owner, or of whom it chose, answers), and for a spec that names no query (a part count of 0, an empty or long
    label, a label no zone is delegated for, such as the "@" of %{s}).

    Worked on the macros' shape, not their values: the value of h, l or p is any name the sender writes, so after
    any transformer (7.3: split on the delimiters, reversed with "r", the rightmost parts kept by the digits) its
    last part is the sender's; s is "l@o", whose rightmost parts are o's unless reversed or kept past them; i is
    the sender's address, whose labels are digits or hex digits, so no top-level name; v is "in-addr" or "ip6" by
    `family`, the same for every sender of it."""
    sender: str | None = None  # the letter of the rightmost value the sender gives
    tail: list[str] = []  # the fixed text after it
    length = 0  # of `tail`: past 254 characters (a final dot), the sender's labels fall off the name's left (7.3),
    # so what follows is no longer expanded (a spec of thousands of %{d} would be, for each term and round)
    end = 0
    for match in _MACRO_PARTS.finditer(spec):
        letter, digits, reverse, delimiters, escape = match.groups()
        literal = spec[end : match.start()]
        end = match.end()
        lower = (letter or "").lower()
        if lower and (lower not in "slodiphv" or (digits and int(digits) == 0)):
            return None  # no name: receivers make no query of it
        if lower in ("h", "l", "p", "i") or (lower == "s" and reverse):
            sender, tail, length = lower, [], 0  # the rightmost part of the value is the sender's
            continue
        if lower == "s":  # "<local part>@<o>", split: its rightmost parts are o's, then the one joining the local
            # part's last to "@" and o's first
            owned = _split_value("@" + sender_domain.rstrip("."), delimiters, "")
            if not digits or int(digits) >= len(owned):
                sender, tail, length, literal = "s", [], 0, ""
            else:
                owned = owned[-int(digits) :]
            piece = literal + _transformed(".".join(owned), letter, "", "", "")
        elif length > 254:
            continue
        elif escape:
            piece = literal + _ESCAPES[escape]
        elif lower == "v":
            piece = literal + _transformed(
                "in-addr" if family == "IPv4" else "ip6", letter, digits, reverse, delimiters
            )
        else:
            value = domain if lower == "d" else sender_domain
            piece = literal + _transformed(value, letter, digits, reverse, delimiters)
        tail.append(piece)
        length += len(piece)
    tail.append(spec[end:])
    if sender is None or length > 254:
        return None
    label_tail, _, suffix = "".join(tail).rstrip(".").lower().partition(".")
    if len(suffix) > 251 or (suffix and any(not 0 < len(label) <= 63 for label in suffix.split("."))):
        return None  # no name (or no room left of the fixed labels for the sender's, 7.3 truncating on the left)
    if not _HOST_LABEL.fullmatch(label_tail):
        return None  # "x@example" under com, "x_y" as a top-level name: no zone is delegated for such a label
    if not suffix:  # the sender writes the whole name, down to its top-level label; an address names none
        return None if sender == "i" else SenderChosenZone(sender, "")
    return SenderChosenZone(sender, suffix) if is_known_public_suffix(suffix) else None


def term_domain_spec(term: SpfTerm) -> str | None:
    """The domain-spec of an include, exists, ptr, a or mx term (the last two without their prefix lengths) or of a
    redirect=, as written; None when it names none (a bare a, mx or ptr reads the record's own domain, 5.3-5.5)."""
    value = term.value or ""
    return (_split_cidr(value)[0] if term.name in ("a", "mx") else value) or None


def term_target(term: SpfTerm, domain: str, sender_domain: str) -> str | None:
    """The name an a, mx or exists term of the record of `domain` queries, for mail from `sender_domain`: its
    domain-spec without the prefix lengths, or `domain` (RFC 7208 5.3, 5.4), its macros expanded
    (`expand_domain_spec`); None when a macro depends on the sender (it cannot be resolved ahead)."""
    spec = term_domain_spec(term)
    return expand_domain_spec(spec, domain, sender_domain) if spec else domain.rstrip(".").lower()


def mx_exchanges(records: tuple[str, ...], each_record: bool = False) -> list[str]:
    """The hosts an mx mechanism looks up the addresses of (RFC 7208 5.4), from its MX records ("10
    mail.example.com."): by preference, each once, the null MX's "." none (RFC 7505). `each_record`: a host
    once for each record naming it, as receivers ask ("an address lookup on each MX name returned", each
    empty answer a void lookup, 4.6.4: pyspf counts two for a host at two preferences)."""
    ranked = []
    for record in records:
        preference, _, exchange = record.strip().partition(" ")
        exchange = exchange.strip().rstrip(".").lower()
        if exchange:
            ranked.append((int(preference) if preference.isdigit() else 65536, exchange))
    hosts = [exchange for _, exchange in sorted(ranked)]
    return hosts if each_record else list(dict.fromkeys(hosts))
