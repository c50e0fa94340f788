"""Header and cookie actions written for an application or a platform: Express (helmet), Netlify (`_headers`),
Vercel (`vercel.json`) and Cloudflare (a Transform Rule, or a Worker where a rule cannot do it).

Where the platform cannot do what is asked (Netlify's `_headers` cannot remove a header or edit a cookie),
the text says in one sentence where it is done instead.
"""

from __future__ import annotations

import json
import re

from .actions import Action, CookieAttributes, RemoveHeaders, SetHeader

SERVER = "Server"


def _js(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _cookie_example(action: CookieAttributes) -> str:
    name = action.cookies[0] if action.cookies else "<name>"
    return f"Set-Cookie: {name}=<value>; {'; '.join(action.attributes)}"


def _cookie_names(action: CookieAttributes) -> str:
    return ", ".join(action.cookies) if action.cookies else "each cookie"


# -- Express (helmet) ---------------------------------------------------------------------------------------------


def _csp_directives(value: str) -> dict[str, list[str]] | None:
    directives: dict[str, list[str]] = {}
    for part in value.split(";"):
        tokens = part.split()
        if not tokens:
            continue
        if tokens[0].lower() in directives or "," in part:
            return None  # two policies in one value: helmet cannot say that
        directives[tokens[0].lower()] = tokens[1:]
    return directives or None


def _hsts_options(value: str) -> dict[str, object] | None:
    options: dict[str, object] = {"maxAge": None, "includeSubDomains": False}
    for part in (p.strip() for p in value.split(";")):
        if match := re.fullmatch(r"(?i)max-age\s*=\s*\"?(\d{1,10})\"?", part):
            options["maxAge"] = int(match.group(1))
        elif part.lower() == "includesubdomains":
            options["includeSubDomains"] = True
        elif part.lower() == "preload":
            options["preload"] = True
        elif part:
            return None
    return options if options["maxAge"] is not None else None


def _options(options: dict[str, object]) -> str:
    return "{ " + ", ".join(f"{key if key.isidentifier() else _js(key)}: {_js(v)}" for key, v in options.items()) + " }"


_HELMET_POLICY = {  # header -> (helmet middleware, the values it accepts)
    "Cross-Origin-Opener-Policy": (
        "crossOriginOpenerPolicy",
        ("same-origin", "same-origin-allow-popups", "unsafe-none"),
    ),
    "Cross-Origin-Embedder-Policy": ("crossOriginEmbedderPolicy", ("require-corp", "credentialless", "unsafe-none")),
    "Cross-Origin-Resource-Policy": ("crossOriginResourcePolicy", ("same-origin", "same-site", "cross-origin")),
}


def _helmet_call(action: SetHeader) -> str | None:
    """helmet's own middleware for the header (helmet 7+ names), or None when helmet has none for it."""
    name, value = action.name, action.value
    lowered = value.strip().lower()
    if name in ("Content-Security-Policy", "Content-Security-Policy-Report-Only"):
        directives = _csp_directives(value)
        if directives is None:
            return None
        report_only = name.endswith("Report-Only")
        options = {"useDefaults": False, "reportOnly": report_only, "directives": directives}
        return f"helmet.contentSecurityPolicy({_options(options)})"
    if name == "Strict-Transport-Security":
        hsts = _hsts_options(value)
        return f"helmet.strictTransportSecurity({_options(hsts)})" if hsts else None
    if name == "X-Frame-Options" and lowered in ("deny", "sameorigin"):
        return f"helmet.xFrameOptions({{ action: {_js(lowered)} }})"
    if name == "X-Content-Type-Options" and lowered == "nosniff":
        return "helmet.xContentTypeOptions()"
    if name == "X-XSS-Protection" and lowered == "0":
        return "helmet.xXssProtection()"
    if name == "Referrer-Policy":
        policies = [p.strip() for p in lowered.split(",") if p.strip()]
        return f"helmet.referrerPolicy({{ policy: {_js(policies)} }})"
    if name in _HELMET_POLICY and lowered in _HELMET_POLICY[name][1]:
        return f"helmet.{_HELMET_POLICY[name][0]}({{ policy: {_js(lowered)} }})"
    return None


_HELMET_REQUIRE = '// npm install helmet; once, near the top of the app\nconst helmet = require("helmet");'


def express(action: Action) -> str:
    if isinstance(action, SetHeader):
        call = _helmet_call(action) if action.mode == "set" else None
        if call:
            return f"{_HELMET_REQUIRE}\napp.use({call});"
        method = "setHeader" if action.mode == "set" else "append"
        why = "helmet has no option for this header" if action.mode == "set" else "beside the one the app may send"
        return (
            f"// before the routes ({why})\n"
            f"app.use((req, res, next) => {{\n  res.{method}({_js(action.name)}, {_js(action.value)});\n  next();\n}});"
        )
    if isinstance(action, RemoveHeaders):
        lines = []
        if "X-Powered-By" in action.names:
            lines += ["// npm install helmet; once, near the top of the app", 'const helmet = require("helmet");']
            lines.append('app.use(helmet.xPoweredBy());  // or app.disable("x-powered-by")')
        others = [name for name in action.names if name != "X-Powered-By"]
        if others:
            lines.append(
                f"// {', '.join(others)}: not sent by Express itself; remove it in the proxy in front of the app"
            )
        return "\n".join(lines)
    options: dict[str, object] = {}
    for attribute in action.attributes:
        name = attribute.split("=", 1)[0].strip().lower()
        if name == "secure":
            options["secure"] = True
        elif name == "httponly":
            options["httpOnly"] = True
        elif name == "samesite":
            options["sameSite"] = attribute.split("=", 1)[1].strip().lower()
    cookies = action.cookies or ("<name>",)
    lines = [
        "// where the app sets the cookie (helmet does not edit cookies); express-session: session({ cookie: {...} })"
    ]
    lines += [f"res.cookie({_js(name)}, value, {_options({**options, 'path': '/'})});" for name in cookies]
    return "\n".join(lines)


# -- Netlify (_headers) -----------------------------------------------------------------------------------------


def netlify(action: Action) -> str:
    if isinstance(action, SetHeader):
        return f"/*\n  {action.name}: {action.value}"
    if isinstance(action, RemoveHeaders):
        others = [name for name in action.names if name != SERVER]
        if not others:
            return "Netlify sends its own Server header, without a version: there is nothing to add to _headers."
        return (
            f"Netlify's _headers file can set headers but not remove them: stop sending {', '.join(others)} where your "
            'functions or framework add it (Express: app.disable("x-powered-by"); Next.js: poweredByHeader: false).'
        )
    return (
        f"Netlify's _headers file cannot edit cookies: add {'; '.join(action.attributes)} where your functions or "
        f"framework set {_cookie_names(action)} (e.g. {_cookie_example(action)})."
    )


# -- Vercel (vercel.json) ---------------------------------------------------------------------------------------


def vercel(action: Action) -> str:
    if isinstance(action, SetHeader):
        config = {"headers": [{"source": "/(.*)", "headers": [{"key": action.name, "value": action.value}]}]}
        return json.dumps(config, indent=2, ensure_ascii=False)
    if isinstance(action, RemoveHeaders):
        others = [name for name in action.names if name != SERVER]
        if not others:
            return "Vercel sends its own Server header, without a version: there is nothing to add to vercel.json."
        return (
            f"vercel.json can set headers but not remove them: stop sending {', '.join(others)} where your "
            "functions or framework add it (Next.js: poweredByHeader: false in next.config.js; "
            'Express: app.disable("x-powered-by")).'
        )
    return (
        f"vercel.json cannot edit cookies: add {'; '.join(action.attributes)} where your functions or middleware "
        f"set {_cookie_names(action)} (e.g. {_cookie_example(action)})."
    )


# -- Cloudflare (Transform Rule, or a Worker) -------------------------------------------------------------------

_RULE_PLACE = "Rules > Transform Rules > Modify Response Header (Rulesets API phase http_response_headers_transform)"


def _transform_rule(description: str, headers: dict[str, dict[str, str]]) -> str:
    rule = {
        "description": f"{description}: {_RULE_PLACE}",
        "expression": "true",
        "action": "rewrite",
        "action_parameters": {"headers": headers},
    }
    return json.dumps(rule, indent=2, ensure_ascii=False)


def _cookie_worker(action: CookieAttributes) -> str:
    names = _js(list(action.cookies))
    steps = "\n".join(
        f"        if (!/;\\s*{re.escape(attribute.split('=', 1)[0])}\\s*(=|;|$)/i.test(cookie)) "
        f"cookie += {_js('; ' + attribute)};"
        for attribute in action.attributes
    )
    return f"""// a Cloudflare Worker on the site's route: adds the attributes to the cookies the origin sets
const COOKIES = {names};  // empty: every cookie
export default {{
  async fetch(request) {{
    const response = await fetch(request);
    const headers = new Headers(response.headers);
    headers.delete("Set-Cookie");
    for (let cookie of response.headers.getSetCookie()) {{
      const name = cookie.split("=", 1)[0].trim();
      if (COOKIES.length === 0 || COOKIES.includes(name)) {{
{steps}
      }}
      headers.append("Set-Cookie", cookie);
    }}
    return new Response(response.body, {{ status: response.status, statusText: response.statusText, headers }});
  }},
}};"""


def cloudflare(action: Action) -> str:
    if isinstance(action, SetHeader):
        operation = "set" if action.mode == "set" else "add"
        return _transform_rule(
            f"{operation.title()} {action.name}", {action.name: {"operation": operation, "value": action.value}}
        )
    if isinstance(action, RemoveHeaders):
        others = [name for name in action.names if name != SERVER]
        if not others:
            return (
                "Cloudflare replaces your origin's Server header with its own (cloudflare), which names no "
                "version: there is nothing to add."
            )
        return _transform_rule(f"Remove {', '.join(others)}", {name: {"operation": "remove"} for name in others})
    return _cookie_worker(action)
