#!/usr/bin/python3
"""Record Salt 3006's address grains for synthetic interface tables.

Each case below is rendered as `ip addr show` prints it (iproute2 on
Debian 12), parsed by Salt's own salt.utils.network._interfaces_ip, and
passed through salt.grains.core (ip_interfaces, ip4_interfaces,
ip6_interfaces, hwaddr_interfaces) and salt.utils.network.ip_addrs /
ip_addrs6 with include_loopback=True (the ipv4 and ipv6 grains of
core.py ip_fqdn). The result, cases.json, is what the Go test compares
against; CI never runs Salt.

    PYTHONPATH=<salt v3006.19 checkout>:<shims> /usr/bin/python3 gen.py > cases.json
"""
import json
import sys

import salt.grains.core as core
import salt.utils.network as network

# Each address: family, address, prefix length, and whether the kernel
# flags it IFA_F_SECONDARY (an IPv4 address added to a subnet that
# already has a primary; iproute2 prints "secondary").
CASES = [
    {
        "name": "leftover test bridge",
        "interfaces": [
            {"name": "lo", "link": "loopback", "hwaddr": "00:00:00:00:00:00",
             "addrs": [["inet", "127.0.0.1", 8, False], ["inet6", "::1", 128, False]]},
            {"name": "eth0", "link": "ether", "hwaddr": "52:54:00:12:34:56",
             "addrs": [["inet", "192.168.1.20", 24, False],
                       ["inet6", "fe80::5054:ff:fe12:3456", 64, False]]},
            {"name": "br-test", "link": "ether", "hwaddr": "02:42:ac:11:00:01",
             "addrs": [["inet", "10.250.0.1", 24, False], ["inet", "10.77.0.1", 16, False]]},
        ],
    },
    {
        "name": "numeric order differs from string order",
        "interfaces": [
            {"name": "lo", "link": "loopback", "hwaddr": "00:00:00:00:00:00",
             "addrs": [["inet", "127.0.0.1", 8, False], ["inet6", "::1", 128, False]]},
            {"name": "ens3", "link": "ether", "hwaddr": "fa:16:3e:00:00:01",
             "addrs": [["inet", "9.9.9.9", 32, False], ["inet", "100.64.0.1", 10, False],
                       ["inet", "10.0.0.2", 8, False], ["inet", "192.0.2.10", 24, False],
                       ["inet6", "2001:db8::10", 64, False], ["inet6", "2001:db8::9", 64, False],
                       ["inet6", "fd00::1", 64, False], ["inet6", "fe80::1", 64, False],
                       ["inet6", "2001:db8:0:a::1", 64, False]]},
        ],
    },
    {
        "name": "secondaries, labels, duplicates",
        "interfaces": [
            {"name": "lo", "link": "loopback", "hwaddr": "00:00:00:00:00:00",
             "addrs": [["inet", "127.0.0.1", 8, False], ["inet", "192.168.9.9", 24, False],
                       ["inet6", "::1", 128, False]]},
            {"name": "v0", "link": "ether", "hwaddr": "f2:cd:3c:2b:cb:56",
             "addrs": [["inet", "10.250.0.5", 24, False], ["inet", "10.77.1.1", 16, False],
                       ["inet", "10.250.0.9", 24, True], ["inet", "10.77.0.3", 16, True],
                       ["inet6", "2001:db8::2", 64, False], ["inet6", "fe80::f0cd:3cff:fe2b:cb56", 64, False]]},
            {"name": "v1", "link": "ether", "hwaddr": "fe:fd:f1:f0:62:21",
             "addrs": [["inet", "10.250.0.5", 24, False], ["inet6", "2001:db8::2", 64, False]]},
            {"name": "tun0", "link": "none", "hwaddr": "", "addrs": []},
        ],
    },
    {
        "name": "IPv4-mapped and IPv4-compatible IPv6",
        "interfaces": [
            {"name": "lo", "link": "loopback", "hwaddr": "00:00:00:00:00:00",
             "addrs": [["inet", "127.0.0.1", 8, False], ["inet6", "::1", 128, False]]},
            {"name": "v0", "link": "ether", "hwaddr": "f2:cd:3c:2b:cb:56",
             "addrs": [["inet", "10.1.1.1", 24, False],
                       ["inet6", "::ffff:10.1.1.1", 128, False],
                       ["inet6", "::10.2.2.2", 128, False],
                       ["inet6", "::ffff:0.0.0.0", 128, False]]},
        ],
    },
    {
        "name": "loopback only",
        "interfaces": [
            {"name": "lo", "link": "loopback", "hwaddr": "00:00:00:00:00:00",
             "addrs": [["inet", "127.0.0.1", 8, False]]},
        ],
    },
]


def render(interfaces):
    """Render interfaces as `ip addr show` output (iproute2 6.1)."""
    out = []
    for idx, iface in enumerate(interfaces, 1):
        flags = "LOOPBACK,UP,LOWER_UP" if iface["link"] == "loopback" else "BROADCAST,MULTICAST,UP,LOWER_UP"
        out.append(f"{idx}: {iface['name']}: <{flags}> mtu 1500 qdisc noqueue state UP group default qlen 1000")
        if iface["link"] == "none":
            out.append("    link/none ")
        else:
            brd = "00:00:00:00:00:00" if iface["link"] == "loopback" else "ff:ff:ff:ff:ff:ff"
            out.append(f"    link/{iface['link']} {iface['hwaddr']} brd {brd}")
        for family, addr, prefix, secondary in iface["addrs"]:
            sec = " secondary" if secondary else ""
            if family == "inet":
                out.append(f"    inet {addr}/{prefix} scope global{sec} {iface['name']}")
            else:
                out.append(f"    inet6 {addr}/{prefix} scope global{sec} ")
            out.append("       valid_lft forever preferred_lft forever")
    return "\n".join(out) + "\n"


def grains(text):
    table = network._interfaces_ip(text)
    core._get_interfaces = lambda: table
    g = {}
    for fn in (core.ip_interfaces, core.ip4_interfaces, core.ip6_interfaces, core.hwaddr_interfaces):
        g.update(fn())
    g["ipv4"] = network.ip_addrs(include_loopback=True, interface_data=table)
    g["ipv6"] = network.ip_addrs6(include_loopback=True, interface_data=table)
    return g


def main():
    cases = []
    for case in CASES:
        text = render(case["interfaces"])
        cases.append(dict(case, ip_addr_show=text, grains=grains(text)))
    json.dump({"salt": "3006.19 (c9c5ab41)", "python": sys.version.split()[0], "cases": cases},
              sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
