"""Which private addresses and host names page reads may still reach (`allow_private_hosts`,
METASEARCH_ALLOW_PRIVATE_HOSTS). Apart from the address guard (plugin.reading.addresses) so that checking
the setting imports no HTTP client.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Sequence

from engines.hosts import HOST_LABEL

ALLOW_VARIABLE = "METASEARCH_ALLOW_PRIVATE_HOSTS"
_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off", ""})

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class PrivateAllowance:
    """Which addresses that are not public a page read may still reach: all of them (`everything`),
    those inside `networks`, and whatever the host names in `names` resolve to (the operator named
    that host, e.g. an internal SearXNG). Public addresses are always reachable."""

    everything: bool = False
    networks: tuple[Network, ...] = ()
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, value: "bool | str | Sequence[str] | PrivateAllowance | None") -> "PrivateAllowance":
        """From the setting's value: a bool, `0`/`1`, or a comma-separated list (or a list) of address
        blocks (`10.1.2.0/24`; a bare address is a block of one) and host names. ValueError names a bad
        entry."""
        if isinstance(value, PrivateAllowance):
            return value
        if value is None or isinstance(value, bool):
            return cls(everything=bool(value))
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _YES or word in _NO:
                return cls(everything=word in _YES)
            value = value.split(",")
        networks: list[Network] = []
        names: set[str] = set()
        for raw in value:
            entry = str(raw).strip().lower().rstrip(".")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            if "/" in entry or ":" in entry or not _is_host_name(entry):
                raise ValueError(f"{str(raw).strip()[:80]!r} is neither an address block (such as 10.1.2.0/24 or "
                                 "127.0.0.1/32) nor a host name")
            names.add(entry)
        return cls(networks=tuple(dict.fromkeys(networks)), names=frozenset(names))

    @property
    def entries(self) -> list[str]:
        """The list as written back: blocks, then names (empty for `everything` or nothing)."""
        return [str(network) for network in self.networks] + sorted(self.names)

    def __bool__(self) -> bool:
        return self.everything or bool(self.networks) or bool(self.names)

    def permits_address(self, address: str) -> bool:
        """Whether an address that is not public may be reached."""
        if self.everything:
            return True
        try:
            ip = ipaddress.ip_address(address.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip.version == network.version and ip in network for network in self.networks)

    def permits_name(self, host: str) -> bool:
        """Whether `host` is a name the operator listed (whatever it resolves to)."""
        return self.everything or host.rstrip(".").lower() in self.names

    def opt_in(self) -> str:
        """How an operator lifts a refusal (a model cannot; the person running it can), naming the list."""
        if self.networks or self.names:
            return (f"not in {ALLOW_VARIABLE}={','.join(self.entries)}; add the address, its block or the host "
                    f"name there, or {ALLOW_VARIABLE}=1 lets page reads reach every private address")
        return f"{ALLOW_VARIABLE}=1 lets page reads reach private addresses, or a list such as 10.1.2.0/24,searx.internal"


def _is_host_name(name: str) -> bool:
    try:
        ascii_name = name if name.isascii() else name.encode("idna").decode("ascii")
    except UnicodeError:
        return False
    return 0 < len(ascii_name) <= 253 and all(HOST_LABEL.fullmatch(label) for label in ascii_name.split("."))


NOTHING_ALLOWED = PrivateAllowance()
