"""The address rule, table-driven: every non-public class refused, public addresses allowed."""

from __future__ import annotations

import ipaddress

import pytest

from app.fetch.address import (
    AddressPolicy,
    InvalidHost,
    literal_address,
    non_public_reason,
    parse_ipv4_like_inet_aton,
)

REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.255.255.254", "loopback"),
    ("10.1.2.3", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.255", "private"),
    ("192.168.1.1", "private"),
    ("169.254.1.1", "link-local"),
    ("100.64.0.1", "cgnat"),
    ("100.127.255.254", "cgnat"),
    ("224.0.0.1", "multicast"),
    ("239.255.255.250", "multicast"),
    ("240.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
    ("0.0.0.0", "unspecified"),
    ("0.1.2.3", "unspecified"),
    ("192.0.2.10", "documentation"),
    ("198.18.0.1", "benchmarking"),
    ("169.254.169.254", "cloud-metadata"),
    ("100.100.100.200", "cloud-metadata"),
    ("fd00:ec2::254", "cloud-metadata"),
    ("::1", "loopback"),
    ("::", "unspecified"),
    ("fe80::1", "link-local"),
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("ff02::1", "multicast"),
    ("fec0::1", "site-local"),
    ("2001:db8::1", "documentation"),
    ("::ffff:127.0.0.1", "ipv4-mapped(127.0.0.1):loopback"),
    ("::ffff:10.0.0.1", "ipv4-mapped(10.0.0.1):private"),
    ("::ffff:169.254.169.254", "ipv4-mapped(169.254.169.254):cloud-metadata"),
    ("::127.0.0.1", "ipv4-compatible"),
    ("64:ff9b::7f00:1", "nat64(127.0.0.1):loopback"),
    ("64:ff9b::a9fe:a9fe", "nat64(169.254.169.254):cloud-metadata"),
    ("64:ff9b:1::808:808", "nat64-local"),
    ("2002:7f00:1::1", "6to4(127.0.0.1):loopback"),
    ("2002:c0a8:101::1", "6to4(192.168.1.1):private"),
    # Teredo: client address is stored inverted (0x80fffffe -> 127.0.0.1)
    ("2001:0:4136:e378:8000:63bf:80ff:fffe", "teredo(127.0.0.1):loopback"),
    ("2001:0:a00:1::1", "teredo(10.0.0.1):private"),  # server field carries 10.0.0.1
    ("100::1", "discard"),
    ("4000::1", "reserved"),  # outside 2000::/3 global unicast
]

ALLOWED = [
    "93.184.215.14",
    "8.8.8.8",
    "1.1.1.1",
    "2606:4700:4700::1111",
    "2a00:1450:4001::200e",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
    "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
]


@pytest.mark.parametrize("address,reason", REFUSED)
def test_non_public_addresses_are_refused(address, reason):
    ip = ipaddress.ip_address(address)
    assert non_public_reason(ip) == reason
    assert not AddressPolicy().check_address(ip).allowed


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address):
    ip = ipaddress.ip_address(address)
    assert non_public_reason(ip) is None
    assert AddressPolicy().check_address(ip).allowed


@pytest.mark.parametrize(
    "host,expected",
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("017700000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
    ],
)
def test_odd_ipv4_spellings_parse_like_inet_aton(host, expected):
    assert str(parse_ipv4_like_inet_aton(host)) == expected
    ip = literal_address(host)
    assert str(ip) == expected
    assert not AddressPolicy().check_address(ip).allowed


@pytest.mark.parametrize("host", ["999.1.1.1", "1.2.3.4.5", "08", "0x1.0x100.1.1", "4294967296"])
def test_numeric_hosts_that_are_not_addresses_are_invalid(host):
    with pytest.raises(InvalidHost):
        literal_address(host)


@pytest.mark.parametrize("host", ["example.com", "1.2.3.example", "xn--bcher-kva.de", "0x.example"])
def test_names_are_not_literals(host):
    assert literal_address(host) is None


def test_bracketed_ipv6_literal():
    assert str(literal_address("[::ffff:127.0.0.1]")) == "::ffff:7f00:1"


def test_allow_private_cidr_and_host_exemptions():
    policy = AddressPolicy(["127.0.0.0/8", "intranet.example", "10.0.0.0/8"])
    assert policy.check_address(ipaddress.ip_address("127.0.0.5")).allowed
    assert policy.check_address(ipaddress.ip_address("10.9.9.9")).allowed
    assert not policy.check_address(ipaddress.ip_address("192.168.0.1")).allowed
    assert not policy.check_address(ipaddress.ip_address("::1")).allowed  # v4 CIDR does not cover v6
    assert policy.check_address(ipaddress.ip_address("192.168.0.1"), host="Intranet.Example.").allowed


def test_cloud_metadata_is_never_exempt():
    policy = AddressPolicy(["169.254.0.0/16", "100.64.0.0/10", "fd00::/8", "meta.internal"])
    for address in ("169.254.169.254", "100.100.100.200", "fd00:ec2::254"):
        assert not policy.check_address(ipaddress.ip_address(address), host="meta.internal").allowed
    assert policy.check_address(ipaddress.ip_address("169.254.1.1")).allowed


def test_any_refused_answer_refuses_the_host():
    policy = AddressPolicy()
    ips = [ipaddress.ip_address(a) for a in ("93.184.215.14", "10.0.0.1")]
    verdict = policy.check_all("mixed.example", ips)
    assert not verdict.allowed and "10.0.0.1" in verdict.detail
    assert not policy.check_all("empty.example", []).allowed
