"""Header and cookie actions written as configuration of a web server: nginx, Apache httpd, Caddy, IIS.

tests/snippets/ loads the nginx, Apache and Caddy output into the real servers from Debian.
"""

from __future__ import annotations

import re

from .actions import Action, RemoveHeaders, SetHeader, Unwritable

#: XML attribute escapes; newlines and tabs as character references, so a parser keeps them (XML 3.3.3).
_XML_ATTRIBUTE = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\r": "&#13;", "\t": "&#9;"}
)


def quoteattr(value: str) -> str:
    """`value` as a double-quoted XML attribute (xml.sax.saxutils.quoteattr imports urllib.request: ~10 ms
    of a command-line scan, issue 14)."""
    return '"' + value.translate(_XML_ATTRIBUTE) + '"'


SERVER = "Server"


def _attribute_name(attribute: str) -> str:
    return attribute.split("=", 1)[0].strip()


def _cookie_pattern(cookies: tuple[str, ...]) -> str:
    """A regular expression for the start of these cookies' Set-Cookie, "" for every cookie. Apache, Caddy and
    IIS get one edit per attribute for all of a finding's cookies: one per cookie made 2 KB of configuration a
    cookie, too much for a fix of each of a finding's cookies (grading.SNIPPET_LIMIT)."""
    if not cookies:
        return ""
    names = [re.escape(cookie) for cookie in cookies]
    return (names[0] if len(names) == 1 else "(?:" + "|".join(names) + ")") + "="


# -- nginx ------------------------------------------------------------------------------------------------------

_NGINX_FLAGS = {"secure": "secure", "httponly": "httponly"}


def _nginx_string(value: str) -> str:
    # nginx expands $name inside any string; ${dollar} is the variable the snippet defines as a literal "$"
    return '"' + value.replace('"', '\\"').replace("$", "${dollar}") + '"'


#: A cookie name nginx reads as itself unquoted; others are quoted ("#a" would start a comment, "'b" a string).
_NGINX_BARE_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _nginx_cookie(name: str) -> str | None:
    """The name as a proxy_cookie_flags argument read as that exact cookie, or None: a name starting with "~"
    is a regular expression to nginx, quoted or not (actions._COOKIE_NAME keeps out $ { } ; quotes and
    whitespace)."""
    if name.startswith("~"):
        return None
    return name if _NGINX_BARE_NAME.fullmatch(name) else f'"{name}"'


def _nginx_flag(attribute: str) -> str:
    name = _attribute_name(attribute).lower()
    if name == "samesite":
        return "samesite=" + attribute.split("=", 1)[1].strip().lower()
    return _NGINX_FLAGS.get(name, name)


def nginx(action: Action) -> str:
    if isinstance(action, SetHeader):
        lines = ["# in the server {} block (a location {} with add_header of its own drops these: repeat them there)"]
        if "$" in action.value:
            lines += ['# in http {}: a literal "$" for the value below', 'geo $dollar { default "$"; }']
        if action.mode == "set":
            lines.append(f"proxy_hide_header {action.name};  # drops the one a proxied app sends")
        lines.append(f"add_header {action.name} {_nginx_string(action.value)} always;")
        return "\n".join(lines)
    if isinstance(action, RemoveHeaders):
        lines = ["# in the server {} block (or http {} for every site)"]
        if SERVER in action.names:
            lines.append("server_tokens off;  # Server: nginx, without its version")
        for name in action.names:
            if name != SERVER:
                lines += [f"proxy_hide_header {name};", f"fastcgi_hide_header {name};"]
        return "\n".join(lines)

    # nginx adds secure and httponly only where the cookie lacks them, but samesite= replaces the cookie's
    # own SameSite (Strict or None would become Lax: checked in real nginx 1.22): written only for a cookie
    # whose SameSite is missing. nginx applies only the first line matching a cookie, so a cookie's line
    # carries every flag it lacks, whichever of its findings wrote it
    def flags(samesite: bool) -> str:
        kept = [a for a in action.attributes if samesite or _attribute_name(a).lower() != "samesite"]
        return " ".join(_nginx_flag(a) for a in kept)

    names = [(written, name) for name in action.cookies if (written := _nginx_cookie(name)) is not None]
    without_samesite = frozenset(action.lacking_samesite)  # `in` on the tuple was quadratic in a cookie flood
    if action.cookies and not names:  # "~" alone would edit every cookie
        raise Unwritable(", ".join(action.cookies))
    lines = [
        "# in the server {} block (nginx 1.19.3+): edits the cookies of responses proxied with proxy_pass;",
        "# nginx applies only the first line matching a cookie: each line has every flag its cookie lacks",
    ]
    lines += [
        f"proxy_cookie_flags {written} {flags(action.samesite_missing or name in without_samesite)};"
        for written, name in names
    ] or [f"proxy_cookie_flags ~ {flags(action.samesite_missing)};"]
    return "\n".join(lines)


# -- Apache httpd -------------------------------------------------------------------------------------------------


def _apache_string(value: str) -> str:
    # mod_headers reads %{...} as a format: %% is a literal percent. Apache expands ${NAME} (a Define or an
    # environment variable) on every configuration line, .htaccess too, and has no escape for it: a value
    # holding one is not written (csp_proposal.writable_source keeps "$" out of what a site wrote).
    if "${" in value:
        raise Unwritable(value)
    return '"' + value.replace("%", "%%").replace('"', '\\"') + '"'


def _apache_cookie_edit(cookies: tuple[str, ...], attribute: str) -> list[str]:
    """Both tables: mod_proxy puts a backend's Set-Cookie in headers_out (edited without `always`), mod_cgi
    and mod_proxy_fcgi (CGI, PHP-FPM) in err_headers_out, which only `Header always` edits (mod_headers)."""
    name = _cookie_pattern(cookies)
    present = rf"(?!.*;\s*(?i:{re.escape(_attribute_name(attribute))})\s*(?:=|;|$))"
    edit = f'edit Set-Cookie "^{present}({name}.*)$" "$1; {attribute}"'
    return [f"Header {edit}", f"Header always {edit}"]


def apache(action: Action) -> str:
    lines = ["# needs mod_headers (a2enmod headers); in the server config, a <VirtualHost> or .htaccess"]
    if isinstance(action, SetHeader):
        if action.mode == "set":
            lines.append(f"Header unset {action.name}")
            lines.append(f"Header always set {action.name} {_apache_string(action.value)}")
        else:
            lines.append(f"Header always add {action.name} {_apache_string(action.value)}")
    elif isinstance(action, RemoveHeaders):
        if SERVER in action.names:
            lines += [
                "# ServerTokens only in the server config (apache2.conf or conf-enabled/security.conf)",
                "ServerTokens Prod",
                "ServerSignature Off",
                "# and the Server header a proxied app sends",
                "Header unset Server",
            ]
        for name in action.names:
            if name != SERVER:
                lines += [f"Header unset {name}", f"Header always unset {name}"]
    else:
        lines[0] += "; cookies the application or a proxied app sets"
        lines += [line for attribute in action.attributes for line in _apache_cookie_edit(action.cookies, attribute)]
    return "\n".join(lines)


# -- Caddy --------------------------------------------------------------------------------------------------------


def _caddy_string(value: str) -> str:
    # Caddy fills {placeholders} in header values: a literal brace is escaped. The Caddyfile replaces
    # {$NAME} and {$NAME:default} (environment variables) before it reads escapes: not written.
    if "{$" in value:
        raise Unwritable(value)
    return '"' + value.replace('"', '\\"').replace("{", "\\{").replace("}", "\\}") + '"'


def _caddy_cookie_edit(cookies: tuple[str, ...], attribute: str) -> list[str]:
    """Add `attribute` where the cookie lacks it. Go's regexp has no lookahead (Apache's edit uses one): the
    attribute is appended, then a second replacement (Caddy applies a field's in order) takes it back where
    the cookie had that attribute already, so SameSite=Strict or None is never followed by a Lax that wins."""
    match = _cookie_pattern(cookies)
    name = re.escape(_attribute_name(attribute))
    had = rf"^({match}.*;\s*(?i:{name})\s*(?:=[^;]*)?(?:;.*)?); {attribute}$"
    return [
        f"Set-Cookie {_caddy_string(f'^({match}.*)$')} {_caddy_string(f'$1; {attribute}')}",
        f"Set-Cookie {_caddy_string(had)} {_caddy_string('$1')}",
    ]


def caddy(action: Action) -> str:
    # `defer` applies the changes to the response as it leaves, after reverse_proxy copied the app's headers
    if isinstance(action, SetHeader):
        sign = "" if action.mode == "set" else "+"
        body = [f"{sign}{action.name} {_caddy_string(action.value)}"]
    elif isinstance(action, RemoveHeaders):
        body = [f"-{name}" for name in action.names]
    else:
        body = [line for attribute in action.attributes for line in _caddy_cookie_edit(action.cookies, attribute)]
    inner = "\n".join(f"    {line}" for line in [*body, "defer"])
    return f"# in the site block\nheader {{\n{inner}\n}}"


# -- IIS (web.config) ---------------------------------------------------------------------------------------------


def _iis_cookie_rule(cookies: tuple[str, ...], attribute: str) -> list[str]:
    name = ", ".join(cookies) or "every cookie"
    match = f"^{_cookie_pattern(cookies)}.*$" if cookies else "^.+$"
    present = rf";\s*{re.escape(_attribute_name(attribute))}\s*(=|;|$)"
    return [
        f"        <rule name={quoteattr(f'Add {attribute} to {name}')}>",
        f'          <match serverVariable="RESPONSE_Set_Cookie" pattern={quoteattr(match)} />',
        "          <conditions>",
        f'            <add input="{{R:0}}" pattern={quoteattr(present)} negate="true" />',
        "          </conditions>",
        f'          <action type="Rewrite" value={quoteattr("{R:0}; " + attribute)} />',
        "        </rule>",
    ]


def iis(action: Action) -> str:
    web_server: list[str] = []
    system_web: list[str] = []
    comment = "<!-- web.config: merge into the site's own -->"
    if isinstance(action, SetHeader):
        headers = [f"        <remove name={quoteattr(action.name)} />"] if action.mode == "set" else []
        headers.append(f"        <add name={quoteattr(action.name)} value={quoteattr(action.value)} />")
        web_server += [
            "    <httpProtocol>",
            "      <customHeaders>",
            *headers,
            "      </customHeaders>",
            "    </httpProtocol>",
        ]
    elif isinstance(action, RemoveHeaders):
        removed = [name for name in action.names if name != SERVER]
        if removed:
            web_server += ["    <httpProtocol>", "      <customHeaders>"]
            web_server += [f"        <remove name={quoteattr(name)} />" for name in removed]
            web_server += ["      </customHeaders>", "    </httpProtocol>"]
        if SERVER in action.names:  # IIS 10: requestFiltering drops its own Server header
            web_server += ["    <security>", '      <requestFiltering removeServerHeader="true" />', "    </security>"]
        if "X-AspNet-Version" in action.names or SERVER in action.names:
            system_web = ['    <httpRuntime enableVersionHeader="false" />']
    else:
        comment = "<!-- web.config: merge into the site's own; needs the IIS URL Rewrite module -->"
        rules = [line for attribute in action.attributes for line in _iis_cookie_rule(action.cookies, attribute)]
        web_server += ["    <rewrite>", "      <outboundRules>", *rules, "      </outboundRules>", "    </rewrite>"]
    lines = [comment, "<configuration>"]
    lines += ["  <system.webServer>", *web_server, "  </system.webServer>"] if web_server else []
    lines += ["  <system.web>", *system_web, "  </system.web>"] if system_web else []
    return "\n".join([*lines, "</configuration>"])
