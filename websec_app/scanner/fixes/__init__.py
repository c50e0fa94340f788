"""Fixes written for the user's own server (issue 15): which server, and the snippets for each."""

from .servers import SERVER_LABELS, SERVERS, detected_server, server_from_headers, servers_in_order
from .snippets import render_snippets

__all__ = ["SERVERS", "SERVER_LABELS", "detected_server", "render_snippets", "server_from_headers", "servers_in_order"]
