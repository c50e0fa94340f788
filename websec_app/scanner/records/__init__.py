"""Parsers of what was fetched: header values, cookies, HTML, CSP, security.txt and DNS records.

Pure functions from text (or a response from the snapshot) to typed, frozen values, one module
per kind of record, each saying what it exports in `__all__`. `fetch` uses them to know what to
fetch next (SPF includes, DMARC report domains, an announced MTA-STS policy) and `checks` to
judge what was fetched; this package imports neither (tests/scanner/test_layers.py).

- cookies: Set-Cookie lines, as browsers read and store them (RFC 6265bis)
- cookie_jar: which cookies Chromium's cookie store keeps when a site sets more than it holds
- header_values: Strict-Transport-Security, Referrer-Policy, Fetch header lists
- structured_fields: RFC 8941 dictionaries and items (Permissions-Policy, COOP, COEP)
- html: the page as browsers parse it, and its header-like <meta> elements
- location: a redirect's Location header as browsers read it
- csp: Content-Security-Policy headers and <meta> policies (CSP3)
- security_txt: RFC 9116 files
- dns_text: TXT records and names as the snapshot keeps them
- spf, dmarc, mta_sts, tls_rpt: mail authentication and transport records
- spf_evaluation: the walk receivers make through a domain's SPF records (RFC 7208 4.6), which the fetch follows
  to know what to ask and the dns check evaluates
"""
