"""moto_server, with EC2's address allocation made faithful.

moto picks an ENI's private IP at random from the whole subnet without looking at what is in
use: two ENIs can get the same IP, and the network address or an address AWS reserves can be
handed out. Real EC2 gives a free address, never the first four of a subnet nor its last.
Twenty agents reserving in the same subnets (tests/many_clusters.rs) would otherwise see
moto's collisions, not ours. So: an address moto picks is one that no ENI of that backend
holds and that EC2 could hand out, chosen under a lock so that concurrent creates cannot pick
the same one.

Elastic IPs likewise: an allocated address is never handed out twice. And, as on EC2, an
account has an Elastic IP limit: DescribeAccountAttributes reports it (`vpc-max-elastic-ips`)
and AllocateAddress beyond it fails with AddressLimitExceeded (moto reports 5 and enforces
nothing). The limit is MOTO_VPC_MAX_ELASTIC_IPS, default 100: AWS's default is 5, but one
world here holds twenty clusters' addresses (a raised quota, as such accounts have).

Usage: python moto_server.py [moto_server arguments...]
"""
import ipaddress
import os
import random
import sys
import threading

from moto.ec2.exceptions import EC2ClientError
from moto.ec2.models import elastic_ip_addresses as eips
from moto.ec2.models import elastic_network_interfaces as enis
from moto.ec2.responses import account_attributes
from moto.server import main

EIP_LIMIT = int(os.environ.get("MOTO_VPC_MAX_ELASTIC_IPS", "100"))

_lock = threading.Lock()
_in_use = set()
_moto_random_private_ip = enis.random_private_ip


def _free_private_ip(cidr=None, ipv6=False):
    if ipv6 or not cidr:
        return _moto_random_private_ip(cidr, ipv6)
    net = ipaddress.IPv4Network(cidr)
    # hosts() leaves out the network and broadcast addresses; EC2 also reserves .1 to .3.
    candidates = [str(ip) for ip in list(net.hosts())[3:]]
    free = [ip for ip in candidates if ip not in _in_use]
    ip = random.choice(free) if free else _moto_random_private_ip(cidr)
    _in_use.add(ip)
    return ip


_moto_create = enis.NetworkInterfaceBackend.create_network_interface


def _create_network_interface(self, *args, **kwargs):
    with _lock:
        _in_use.clear()
        for eni in self.enis.values():
            _in_use.add(eni.private_ip_address)
            for address in eni.private_ip_addresses or []:
                _in_use.add(address.get("PrivateIpAddress"))
        return _moto_create(self, *args, **kwargs)


enis.random_private_ip = _free_private_ip
enis.NetworkInterfaceBackend.create_network_interface = _create_network_interface

# Elastic IPs: moto draws from 127.0.0.0/8 at random; two allocations could collide (rarely,
# but twenty agents make sixty). A drawn address already allocated is drawn again.
_eip_lock = threading.Lock()
_eips_in_use = set()
_moto_random_ip = eips.random_ip


def _free_public_ip():
    while True:
        ip = _moto_random_ip()
        if ip not in _eips_in_use:
            _eips_in_use.add(ip)
            return ip


_moto_allocate = eips.ElasticAddressBackend.allocate_address


def _allocate_address(self, *args, **kwargs):
    with _eip_lock:
        if len(self.addresses) >= EIP_LIMIT:
            raise EC2ClientError(
                "AddressLimitExceeded", "The maximum number of addresses has been reached."
            )
        _eips_in_use.clear()
        _eips_in_use.update(a.public_ip for a in self.addresses)
        return _moto_allocate(self, *args, **kwargs)


eips.random_ip = _free_public_ip
eips.ElasticAddressBackend.allocate_address = _allocate_address

_moto_describe_account_attributes = account_attributes.AccountAttributes.describe_account_attributes


def _describe_account_attributes(self):
    result = _moto_describe_account_attributes(self)
    for attribute in result.result["AccountAttributes"]:
        if attribute["AttributeName"] in ("vpc-max-elastic-ips", "max-elastic-ips"):
            attribute["AttributeValues"] = [{"AttributeValue": str(EIP_LIMIT)}]
    return result


account_attributes.AccountAttributes.describe_account_attributes = _describe_account_attributes

if __name__ == "__main__":
    sys.argv[0] = "moto_server"
    sys.exit(main())
