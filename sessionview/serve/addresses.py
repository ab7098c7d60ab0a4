"""Addresses for ``sessionview serve``: loopback or not, and how a host is written in a URL or a Host header."""

from __future__ import annotations

import ipaddress
import socket

class ServeError(Exception):
    """A one-line usage error (exit status 2)."""


# --------------------------------------------------------------------------------------------------
# addresses


def ip_of(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        ip = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def host_name(ip_or_name: str) -> str:
    """How a host appears in a URL or a Host header: IPv6 in brackets, names in lower case."""
    ip = ip_of(ip_or_name)
    if ip is None:
        return ip_or_name.lower().rstrip(".")
    return f"[{ip.compressed}]" if ip.version == 6 else ip.compressed


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``; a name is loopback if all its addresses are."""
    if host.lower().rstrip(".") == "localhost":
        return True
    ip = ip_of(host)
    if ip is not None:
        return ip.is_loopback
    try:
        infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except OSError:
        return False
    ips = [ip_of(str(info[4][0])) for info in infos]
    return bool(ips) and all(ip is not None and ip.is_loopback for ip in ips)


def is_wildcard(host: str) -> bool:
    ip = ip_of(host)
    return ip is not None and ip.is_unspecified


def authority(name: str, port: int) -> str:
    return name if port == 80 else f"{name}:{port}"

