"""HEAD on every GET endpoint of the API (RFC 9110 §9.3.2: "identical to GET except that the server MUST NOT
send content"; §9.1: all general-purpose servers MUST support GET and HEAD).

FastAPI's routes answer only the methods they declare, so HEAD on `/api/health` or `/api/verify-key` was a
405. Declaring HEAD on each route would add a HEAD operation per GET to the OpenAPI document; instead, this
wrapper, outermost but for the request bounds, runs a HEAD request to a path that has a GET route as that
GET and forwards the response's status and headers (Content-Length included, as the GET's) without its
content. A HEAD to any other path passes through as HEAD: the /api catch-all answers 405, and, mounted in
Reflex, the UI's own routes answer it as they always did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """ASGI wrapper: HEAD to a path in `get_paths` is served as GET, with the content dropped."""

    def __init__(self, app: ASGIApp, get_paths: Sequence[re.Pattern[str]]) -> None:
        self.app = app
        self.get_paths = tuple(get_paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD" or not self._has_get(scope["path"]):
            await self.app(scope, receive, send)
            return

        async def send_without_content(message: Message) -> None:
            if message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, send_without_content)

    def _has_get(self, path: str) -> bool:
        return any(pattern.match(path) for pattern in self.get_paths)


__all__ = ["HeadAsGet"]
