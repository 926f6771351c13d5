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

With IAM enforcement on, a create call that tags on create also needs ec2:CreateTags, as on
EC2 (see the end of this file).

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

# What holds an address, as EC2 refuses it (moto lets it all go silently):
#
# - ReleaseAddress of an Elastic IP that is associated (to an instance or an interface, e.g.
#   a network load balancer's node) fails with InvalidIPAddress.InUse; the address stays,
#   associated (EC2 API reference, ReleaseAddress: "[Nondefault VPC] You must disassociate
#   the Elastic IP address before you can release it. Otherwise, Amazon EC2 returns an error
#   (InvalidIPAddress.InUse)"). moto disassociates and releases.
# - An interface Elastic Load Balancing makes for a load balancer node is requester-managed
#   (RequesterManaged true, RequesterId amazon-elb, InterfaceType network_load_balancer): no
#   one but ELB may delete it, DeleteNetworkInterface fails with InvalidNetworkInterface.InUse
#   ("You can't delete a network interface that is in use", EC2 user guide, delete_eni; the
#   message as EC2 writes it: "Interface: [eni-...] in use."). ELB deletes it itself when the
#   load balancer goes. Here ELB is the local API server's simulated load-balancer controller,
#   which says so on each request (header X-Sim-Requester: amazon-elb); every interface it
#   creates is requester-managed, and only it may delete one.
ELB = "amazon-elb"
_requester = threading.local()


def _requester_id():
    return getattr(_requester, "id", None)


def _create_as_requester(self, *args, **kwargs):
    eni = _create_network_interface(self, *args, **kwargs)
    if _requester_id() == ELB:
        eni.requester_managed = True
        eni.requester_id = ELB
        eni.interface_type = "network_load_balancer"
    return eni


_moto_delete_eni = enis.NetworkInterfaceBackend.delete_network_interface


def _delete_network_interface(self, eni_id):
    eni = self.enis.get(eni_id)
    if eni is not None and eni.requester_managed and _requester_id() != eni.requester_id:
        raise EC2ClientError("InvalidNetworkInterface.InUse", f"Interface: [{eni_id}] in use.")
    return _moto_delete_eni(self, eni_id)


enis.NetworkInterfaceBackend.create_network_interface = _create_as_requester
enis.NetworkInterfaceBackend.delete_network_interface = _delete_network_interface

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

_moto_release = eips.ElasticAddressBackend.release_address


def _release_address(self, address=None, allocation_id=None):
    found = self.address_by_ip([address]) if address else self.address_by_allocation([allocation_id])
    eip = found[0]
    if eip.association_id or eip.eni is not None or eip.instance is not None:
        raise EC2ClientError("InvalidIPAddress.InUse", f"Address {eip.public_ip} is in use.")
    return _moto_release(self, address=address, allocation_id=allocation_id)


eips.ElasticAddressBackend.release_address = _release_address

_moto_describe_account_attributes = account_attributes.AccountAttributes.describe_account_attributes


def _describe_account_attributes(self):
    result = _moto_describe_account_attributes(self)
    for attribute in result.result["AccountAttributes"]:
        if attribute["AttributeName"] in ("vpc-max-elastic-ips", "max-elastic-ips"):
            attribute["AttributeValues"] = [{"AttributeValue": str(EIP_LIMIT)}]
    return result


account_attributes.AccountAttributes.describe_account_attributes = _describe_account_attributes

# Public IPv4 pools (BYO IP), which moto lacks: AllocateAddress ignores PublicIpv4Pool and
# DescribePublicIpv4Pools does not exist. The local world has two pools. An allocation from a
# pool takes its lowest free address; from a pool that does not exist, or one with no free
# address, it is refused and nothing is allocated, as EC2 refuses it (the error codes are the
# fake's: EC2 documents no code for either case).
POOLS = {
    "ipv4pool-ec2-0123456789abcdef0": "203.0.113.0/28",
    # Provisioned, but every address of it is in use elsewhere.
    "ipv4pool-ec2-0fffffffffffffff0": "203.0.113.240/32",
}
_POOL_USED_ELSEWHERE = {"203.0.113.240"}

from moto.core.responses import ActionResult
from moto.ec2.exceptions import EC2ClientError
from moto.ec2.responses import EC2Response
from moto.ec2.utils import add_tag_specification


def _pool_free(backend, pool):
    taken = {a.public_ip for a in backend.addresses} | _POOL_USED_ELSEWHERE
    return [str(ip) for ip in ipaddress.IPv4Network(POOLS[pool]) if str(ip) not in taken]


_moto_allocate_response = EC2Response.allocate_address
# Pool picks and their allocations one at a time (the backend's allocate takes _eip_lock).
_pool_lock = threading.Lock()


def _allocate_address_response(self):
    pool = self._get_param("PublicIpv4Pool", if_none=None)
    if not pool or pool == "amazon":
        return _moto_allocate_response(self)
    if pool not in POOLS:
        raise EC2ClientError("InvalidPublicIpv4PoolID.NotFound", f"The public IPv4 pool '{pool}' does not exist")
    with _pool_lock:
        free = _pool_free(self.ec2_backend, pool)
        if not free:
            raise EC2ClientError("InsufficientAddressCapacity", f"The public IPv4 pool '{pool}' has no free address")
        tags = add_tag_specification(self._get_param("TagSpecifications", []))
        self.error_on_dryrun()
        address = self.ec2_backend.allocate_address(self._get_param("Domain", if_none=None), address=free[0], tags=tags)
    return ActionResult({"PublicIp": address.public_ip, "Domain": address.domain,
                         "AllocationId": address.allocation_id, "PublicIpv4Pool": pool})


def _describe_public_ipv4_pools(self):
    wanted = self._get_param("PoolIds", if_none=None) or list(POOLS)
    pools = []
    for pool in wanted:
        if pool not in POOLS:
            raise EC2ClientError("InvalidPublicIpv4PoolID.NotFound", f"The public IPv4 pool '{pool}' does not exist")
        net = ipaddress.IPv4Network(POOLS[pool])
        free = len(_pool_free(self.ec2_backend, pool))
        pools.append({"PoolId": pool, "Description": "bootstrap-sim BYO IP pool",
                      "PoolAddressRanges": [{"FirstAddress": str(net[0]), "LastAddress": str(net[-1]),
                                             "AddressCount": net.num_addresses, "AvailableAddressCount": free}],
                      "TotalAddressCount": net.num_addresses, "TotalAvailableAddressCount": free})
    return ActionResult({"PublicIpv4Pools": pools})


EC2Response.allocate_address = _allocate_address_response
EC2Response.describe_public_ipv4_pools = _describe_public_ipv4_pools


def _as_requester(method):
    """Runs `method` knowing who asks (the X-Sim-Requester header; see ELB above)."""

    def wrapped(self):
        _requester.id = self.headers.get("X-Sim-Requester")
        try:
            return method(self)
        finally:
            _requester.id = None

    return wrapped


EC2Response.create_network_interface = _as_requester(EC2Response.create_network_interface)
EC2Response.delete_network_interface = _as_requester(EC2Response.delete_network_interface)

# IAM enforcement (moto's, off until `POST /moto-api/reset-auth` with a count, as
# AwsPeers::enforce_iam does): moto then checks each request's signature against the IAM
# user's key and the user's policies. Its refusals come in one generic shape,
# <ErrorResponse><Errors><Error>, which neither EC2 nor STS uses (boto3 reads it anyway; the
# Rust SDK does not). EC2 answers a denied action with UnauthorizedOperation (HTTP 403) and an
# unknown key or a bad signature with AuthFailure (HTTP 401), in <Response><Errors><Error>;
# STS (awsQuery) answers InvalidClientTokenId / SignatureDoesNotMatch / AccessDenied (HTTP
# 403) in <ErrorResponse><Error>. So these two services get the real shapes.
from xml.sax.saxutils import escape

from moto.core.exceptions import _RESTError
from moto.iam import access_control


class _AuthError(_RESTError):
    def __init__(self, service, status, code, message):
        super().__init__(code, message)
        self.code = status
        error = f"<Code>{code}</Code><Message>{escape(message)}</Message>"
        if service == "ec2":
            body = f"<Response><Errors><Error>{error}</Error></Errors><RequestID>bootstrap-sim</RequestID></Response>"
        else:
            body = f"<ErrorResponse><Error><Type>Sender</Type>{error}</Error><RequestId>bootstrap-sim</RequestId></ErrorResponse>"
        self.description = '<?xml version="1.0" encoding="UTF-8"?>\n' + body


_moto_access_denied = access_control.IAMRequest._raise_access_denied
_moto_invalid_key = access_control.IAMRequest._raise_invalid_access_key
_moto_bad_signature = access_control.IAMRequest._raise_signature_does_not_match
_EC2_AUTH_FAILURE = "AWS was not able to validate the provided access credentials"


def _raise_access_denied(self):
    if self._service == "ec2":
        raise _AuthError("ec2", 403, "UnauthorizedOperation",
                         "You are not authorized to perform this operation. "
                         f"User: {self._access_key.arn} is not authorized to perform: {self._action}")
    if self._service == "sts":
        raise _AuthError("sts", 403, "AccessDenied",
                         f"User: {self._access_key.arn} is not authorized to perform: {self._action}")
    _moto_access_denied(self)


def _raise_invalid_access_key(self, reason):
    if self._service == "ec2":
        raise _AuthError("ec2", 401, "AuthFailure", _EC2_AUTH_FAILURE)
    if self._service == "sts":
        raise _AuthError("sts", 403, "InvalidClientTokenId", "The security token included in the request is invalid.")
    _moto_invalid_key(self, reason)


def _raise_signature_does_not_match(self):
    if self._service == "ec2":
        raise _AuthError("ec2", 401, "AuthFailure", _EC2_AUTH_FAILURE)
    if self._service == "sts":
        raise _AuthError("sts", 403, "SignatureDoesNotMatch",
                         "The request signature we calculated does not match the signature you provided.")
    _moto_bad_signature(self)


access_control.IAMRequest._raise_access_denied = _raise_access_denied
access_control.IAMRequest._raise_invalid_access_key = _raise_invalid_access_key
access_control.IAMRequest._raise_signature_does_not_match = _raise_signature_does_not_match

# Tag on create: an EC2 call that creates a resource with TagSpecifications needs
# ec2:CreateTags as well, and EC2 checks it for a DryRun too (EC2 user guide, "Grant
# permission to tag Amazon EC2 resources during creation": "If tags are specified in the
# resource-creating action, Amazon performs additional authorization on the ec2:CreateTags
# action"). moto checks the one action only, so a policy without ec2:CreateTags would pass
# here and fail on EC2.
_moto_check_action_permitted = access_control.IAMRequest.check_action_permitted


def _check_action_permitted(self, resource):
    _moto_check_action_permitted(self, resource)
    tags_on_create = any(str(key).startswith("TagSpecification.") for key in (self._data or {}))
    if self._service == "ec2" and tags_on_create and self._action != "ec2:CreateTags":
        creating = self._action
        self._action = "ec2:CreateTags"
        try:
            _moto_check_action_permitted(self, resource)
        finally:
            self._action = creating


access_control.IAMRequest.check_action_permitted = _check_action_permitted

if __name__ == "__main__":
    sys.argv[0] = "moto_server"
    sys.exit(main())
