"""Which network addresses a page fetch may reach (the SSRF rule).

A page URL comes from a search engine or a web page, i.e. from strangers. Before any connection the
host is turned into addresses and every address must be public. The tables below are explicit rather
than relying only on `ipaddress.is_global`, whose IPv6 tables changed between Python patch releases.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud instance-metadata endpoints: never reachable, even if an allow_private CIDR covers them.
CLOUD_METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200", "192.0.0.192", "fd00:ec2::254")
)

_V4_BLOCKED: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), label)
    for net, label in (
        ("0.0.0.0/8", "unspecified"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "cgnat"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "reserved"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("240.0.0.0/4", "reserved"),  # includes 255.255.255.255
    )
)

_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_V6_BLOCKED: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), label)
    for net, label in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::/96", "ipv4-compatible"),
        ("64:ff9b:1::/48", "nat64-local"),
        ("100::/64", "discard"),
        ("2001:db8::/32", "documentation"),
        ("2001:10::/28", "orchid"),
        ("2001:20::/28", "orchid"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "srv6"),
        ("fc00::/7", "private"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
)
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def non_public_reason(ip: IPAddress) -> str | None:
    """Why `ip` must not be dialled, or None when it is a public unicast address."""
    if ip in CLOUD_METADATA:
        return "cloud-metadata"
    if isinstance(ip, ipaddress.IPv4Address):
        for net, label in _V4_BLOCKED:
            if ip in net:
                return label
        return None if ip.is_global else "reserved"
    # IPv6 forms that carry an IPv4 address reach that IPv4 host: judge the embedded address.
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        form, inner = embedded
        for v4 in inner:
            why = non_public_reason(v4)
            if why:
                return f"{form}({v4}):{why}"
        return None
    for net6, label in _V6_BLOCKED:
        if ip in net6:
            return label
    if ip not in _V6_GLOBAL_UNICAST:
        return "reserved"
    return None


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> tuple[str, list[ipaddress.IPv4Address]] | None:
    if ip.ipv4_mapped is not None:
        return "ipv4-mapped", [ip.ipv4_mapped]
    if ip in _NAT64:
        return "nat64", [ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)]
    if ip in _SIX_TO_FOUR:
        return "6to4", [ipaddress.IPv4Address((int(ip) >> 80) & 0xFFFFFFFF)]
    if ip in _TEREDO:
        server, client = ip.teredo  # type: ignore[misc]
        return "teredo", [server, client]
    return None


# --- literal hosts ---------------------------------------------------------------------------

_NUMERIC_PART = re.compile(r"^(0[xX][0-9a-fA-F]*|[0-9]+)$")


def parse_ipv4_like_inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """Parse the IPv4 spellings that inet_aton and browsers accept: 2130706433, 0x7f000001, 127.1,
    0177.0.0.1, 017700000001, 0. Returns None when `host` is not such a spelling."""
    parts = host.split(".")
    if len(parts) > 4 or any(not _NUMERIC_PART.match(p) for p in parts):
        return None
    values = []
    for p in parts:
        if p[:2].lower() == "0x":
            values.append(int(p[2:] or "0", 16))
        elif len(p) > 1 and p.startswith("0"):
            if any(c in "89" for c in p):
                return None
            values.append(int(p, 8))
        else:
            values.append(int(p))
    *head, last = values
    if any(v > 255 for v in head) or last >= 256 ** (4 - len(head)):
        return None
    number = 0
    for v in head:
        number = number << 8 | v
    number = number << (8 * (4 - len(head))) | last
    return ipaddress.IPv4Address(number)


def _looks_numeric(host: str) -> bool:
    """WHATWG URL rule: a host whose last label is a number is an IPv4 address or invalid."""
    last = host.rsplit(".", 1)[-1]
    return bool(_NUMERIC_PART.match(last))


class InvalidHost(ValueError):
    pass


def literal_address(host: str) -> IPAddress | None:
    """The address a host names literally (any spelling), None for a DNS name.

    Raises InvalidHost for numeric-looking hosts that are not a valid address (never sent to DNS).
    """
    host = host.strip("[]").rstrip(".")
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _looks_numeric(host):
        v4 = parse_ipv4_like_inet_aton(host)
        if v4 is None:
            raise InvalidHost(f"numeric host {host!r} is not a valid address")
        return v4
    return None


# --- the policy ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AddressVerdict:
    allowed: bool
    detail: str = ""


class AddressPolicy:
    """Public addresses only, except hosts / CIDRs the operator lists in allow_private."""

    def __init__(self, allow_private: Iterable[str] = ()):
        self._hosts: set[str] = set()
        self._hosts_file_names: frozenset[str] | None = None  # read on first use
        self._networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in allow_private:
            entry = entry.strip()
            if not entry:
                continue
            try:
                self._networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                self._hosts.add(normalize_host(entry))

    def host_exempt(self, host: str) -> bool:
        return normalize_host(host) in self._hosts

    def check_name(self, host: str) -> AddressVerdict:
        """Proxy mode: names are resolved by the proxy, so internal-looking names are refused here."""
        if self.host_exempt(host):
            return AddressVerdict(True)
        if self._hosts_file_names is None:
            self._hosts_file_names = _hosts_file_names()
        why = local_name_reason(host, self._hosts_file_names)
        return AddressVerdict(why is None, why or "")

    def check_address(self, ip: IPAddress, *, host: str = "") -> AddressVerdict:
        if ip in CLOUD_METADATA:
            return AddressVerdict(False, f"{ip} is cloud-metadata")
        if host and self.host_exempt(host):
            return AddressVerdict(True)
        if any(ip.version == net.version and ip in net for net in self._networks):
            return AddressVerdict(True)
        why = non_public_reason(ip)
        if why:
            return AddressVerdict(False, f"{ip} is {why}")
        return AddressVerdict(True)

    def check_all(self, host: str, ips: Iterable[IPAddress]) -> AddressVerdict:
        """Refuse if ANY address is refused: an attacker's DNS may mix one private answer in."""
        ips = list(ips)
        if not ips:
            return AddressVerdict(False, f"{host} resolved to no address")
        for ip in ips:
            verdict = self.check_address(ip, host=host)
            if not verdict.allowed:
                return verdict
        return AddressVerdict(True)


# Names that only mean something inside a network (RFC 6761/6762/8375 and common intranet suffixes).
# In proxy mode the proxy resolves names, so these are refused by name: a forward proxy inside the
# operator's network would otherwise resolve them to internal services.
LOCAL_NAME_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa", ".intranet", ".corp", ".localdomain")
HOSTS_FILE = "/etc/hosts"


def _hosts_file_names(path: str = HOSTS_FILE) -> frozenset[str]:
    """Every name the machine's hosts file maps: by definition names of this machine's network."""
    names: set[str] = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                fields = line.split("#", 1)[0].split()
                names.update(normalize_host(n) for n in fields[1:])
    except OSError:
        pass
    return frozenset(names)


def local_name_reason(host: str, hosts_file_names: frozenset[str]) -> str | None:
    """Why a host *name* is internal without resolving it, or None."""
    name = normalize_host(host)
    if name == "localhost" or name.endswith(LOCAL_NAME_SUFFIXES):
        return f"{name!r} is a local name"
    if "." not in name:
        return f"{name!r} is a single-label (intranet) name"
    if name in hosts_file_names:
        return f"{name!r} is in {HOSTS_FILE}"
    return None


def normalize_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()
