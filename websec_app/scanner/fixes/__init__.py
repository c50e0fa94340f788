"""Fixes written for the user's own server (issue 15): which server, and the snippets for each."""

from .servers import SERVER_LABELS, SERVERS, detected_server, server_from_headers, servers_in_order

__all__ = ["SERVERS", "SERVER_LABELS", "detected_server", "server_from_headers", "servers_in_order"]
