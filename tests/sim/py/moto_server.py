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

With IAM enforcement on, EC2's calls are authorized as EC2 does: on the resource's ARN with
its tags as condition keys, and a create call that tags on create also needs ec2:CreateTags
with ec2:CreateAction (see the end of this file).

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

# moto finds one resource's tags by scanning every tag of the account (TaggedEC2Resource.get_tags
# calls describe_tags with a resource-id filter), so a tag filter over n resources costs n^2:
# about 150 ms per DescribeAddresses with a hundred clusters' addresses, and a hundred agents'
# observations queued minutes behind it on moto's one Python thread, where EC2 answers them at
# once (issue 27's fleet). The same answer, looked up by the resource's id as EC2 does (moto's
# regex also let a resource-id filter match any id it is a prefix of).
from moto.ec2.models.core import TaggedEC2Resource
from moto.ec2.utils import EC2_PREFIX_TO_RESOURCE, get_prefix


def _get_tags(self):
    if not self.id:
        return []
    kind = EC2_PREFIX_TO_RESOURCE.get(get_prefix(self.id), "")
    return [
        {"resource_id": self.id, "key": key, "value": value, "resource_type": kind}
        for key, value in self.ec2_backend.tags.get(self.id, {}).items()
    ]


TaggedEC2Resource.get_tags = _get_tags

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


# The signature is over the bytes sent. moto's server loses a form POST's body (werkzeug
# parses it into request.form, so request.data is empty) and moto then signs its dict again
# with botocore's form encoding: a space becomes "+" where the SDK sent "%20", and a request
# whose values hold a space (CreateNetworkInterface's Description) fails with AuthFailure, as
# EC2 never would. Rebuild the body as the SDKs encode it (RFC 3986: all but A-Z a-z 0-9 - _
# . ~ percent-encoded), in the order it came.
from urllib.parse import quote as _quote

_moto_create_aws_request = access_control.IAMRequestBase._create_aws_request


def _create_aws_request(self):
    if not self._body and isinstance(self._data, dict) and self._method == "POST":
        pairs = []
        for key, values in self._data.items():
            for value in values if isinstance(values, list) else [values]:
                pairs.append(f"{_quote(str(key), safe='-_.~')}={_quote(str(value), safe='-_.~')}")
        self._body = "&".join(pairs).encode()
    return _moto_create_aws_request(self)


access_control.IAMRequestBase._create_aws_request = _create_aws_request

# The simulated controller plays Elastic Load Balancing (X-Sim-Requester: amazon-elb, see
# ELB above): on AWS that service acts under its own service-linked role, never under the
# agent's policy, so its calls are not checked against the agent's user here either.
from moto.core.authorization import ActionAuthenticatorMixin

_moto_authorize = ActionAuthenticatorMixin._authenticate_and_authorize_action


def _authenticate_and_authorize_action(self, iam_request_cls, resource="*"):
    if self.headers.get("X-Sim-Requester") == "amazon-elb":
        return None
    return _moto_authorize(self, iam_request_cls, resource)


ActionAuthenticatorMixin._authenticate_and_authorize_action = _authenticate_and_authorize_action
access_control.IAMRequest._raise_access_denied = _raise_access_denied
access_control.IAMRequest._raise_invalid_access_key = _raise_invalid_access_key
access_control.IAMRequest._raise_signature_does_not_match = _raise_signature_does_not_match

# IAM as EC2 evaluates it, for the EC2 calls. moto's own check (moto/iam/access_control.py,
# IAMRequestBase.check_action_permitted) matches the action only: it passes every request the
# resource "*", and a statement with a Condition it cannot fill (aws:ResourceTag, ec2:CreateAction)
# answers DENIED, which would turn a correct least-privilege policy into a refusal, and a
# Resource scoped to an ARN never matches "*". So for service ec2 the request's resource ARN
# and condition context are built here as EC2 builds them (Service Authorization Reference,
# "Actions, resources, and condition keys for Amazon EC2"; IAM user guide, "Policy evaluation
# logic"), and the policies of the caller are evaluated on them:
#
# - ReleaseAddress is on arn:aws:ec2:<region>:<account>:elastic-ip/<allocation id>,
#   DeleteNetworkInterface on .../network-interface/<id>; both with aws:ResourceTag/<key> from
#   the resource's tags (a policy conditioned on our ownership tag refuses what is not ours).
# - AllocateAddress / CreateNetworkInterface with TagSpecifications also need ec2:CreateTags,
#   with ec2:CreateAction = the creating action ("If tags are specified in the
#   resource-creating action, Amazon performs additional authorization on the ec2:CreateTags
#   action", EC2 user guide, "Grant permission to tag Amazon EC2 resources during creation"),
#   and EC2 checks it for a DryRun too.
# - An explicit Deny wins; else some Allow must match action, resource and every condition.
#   Condition operators: StringEquals, StringLike, StringNotEquals (and ...IfExists); an
#   operator this evaluator does not know never holds (a refusal, never a silent allow).
import fnmatch
import json as _json
import re as _re

from moto.ec2.models import ec2_backends

_moto_check_action_permitted = access_control.IAMRequest.check_action_permitted


def _values(data, key):
    value = (data or {}).get(key)
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _glob(pattern, value, case_sensitive):
    regex = "^" + _re.escape(pattern).replace(r"\*", ".*").replace(r"\?", ".") + "$"
    return _re.match(regex, value, 0 if case_sensitive else _re.IGNORECASE) is not None


def _listed(element):
    return element if isinstance(element, list) else [element]


def _condition_holds(operator, key, wanted, context):
    if_exists = operator.endswith("IfExists")
    base = operator[: -len("IfExists")] if if_exists else operator
    present = {k.lower(): v for k, v in context.items()}
    actual = present.get(key.lower())
    if actual is None:
        return if_exists or base == "StringNotEquals"
    actual = _listed(actual)
    wanted = [str(w) for w in _listed(wanted)]
    if base == "StringEquals":
        return any(a in wanted for a in actual)
    if base == "StringLike":
        return any(_glob(w, a, True) for w in wanted for a in actual)
    if base == "StringNotEquals":
        return all(a not in wanted for a in actual)
    sys.stderr.write(f"moto_server.py: condition operator {operator} is not evaluated here: refused\n")
    return False


def _statement_applies(statement, action, resource, context):
    if "NotAction" in statement:
        if any(_glob(p, action, False) for p in _listed(statement["NotAction"])):
            return False
    elif not any(_glob(p, action, False) for p in _listed(statement.get("Action", []))):
        return False
    if "NotResource" in statement:
        if any(_glob(p, resource, True) for p in _listed(statement["NotResource"])):
            return False
    elif not any(_glob(p, resource, True) for p in _listed(statement.get("Resource", []))):
        return False
    for operator, pairs in (statement.get("Condition") or {}).items():
        for key, wanted in pairs.items():
            if not _condition_holds(operator, key, wanted, context):
                return False
    return True


def _permitted(self, action, resource, context):
    allowed = False
    for policy in self._access_key.collect_policies():
        document = access_control.IAMPolicy(policy)._policy_json
        for statement in _listed(document.get("Statement", [])):
            if _statement_applies(statement, action, resource, context):
                if statement.get("Effect") == "Deny":
                    return False
                allowed = True
    return allowed


def _ec2_checks(self):
    """(action, resource ARN, condition context) EC2 authorizes for this request."""
    action = self._action.split(":", 1)[1]
    arn = f"arn:aws:ec2:{self._region}:{self.account_id}"
    backend = ec2_backends[self.account_id][self._region]

    def tags_of(resource_id):
        return {f"aws:ResourceTag/{k}": v for k, v in backend.tags.get(resource_id, {}).items()}

    if action == "ReleaseAddress":
        ids = _values(self._data, "AllocationId")
        return [(self._action, f"{arn}:elastic-ip/{i}", tags_of(i)) for i in ids] or [(self._action, "*", {})]
    if action == "DeleteNetworkInterface":
        ids = _values(self._data, "NetworkInterfaceId")
        return [(self._action, f"{arn}:network-interface/{i}", tags_of(i)) for i in ids] or [(self._action, "*", {})]
    kinds = {"AllocateAddress": "elastic-ip", "CreateNetworkInterface": "network-interface"}
    if action in kinds:
        created = f"{arn}:{kinds[action]}/*"
        checks = [(self._action, created, {})]
        if any(str(key).startswith("TagSpecification.") for key in (self._data or {})):
            checks.append(("ec2:CreateTags", created, {"ec2:CreateAction": action}))
        return checks
    return [(self._action, "*", {})]


def _check_action_permitted(self, resource):
    if self._service != "ec2":
        return _moto_check_action_permitted(self, resource)
    for action, arn, context in _ec2_checks(self):
        if not _permitted(self, action, arn, context):
            asked = self._action
            self._action = action
            try:
                self._raise_access_denied()
            finally:
                self._action = asked


access_control.IAMRequest.check_action_permitted = _check_action_permitted

# Route53, authorized here with the same evaluation (`_permitted`), for the Route53 proxy
# (tests/sim/src/proxy/): ministack serves Route53 and knows no IAM, while the users and
# their policies live in this moto. While IAM enforcement is on, the proxy posts each Route53
# request to `POST /moto-api/authorize` as JSON {method, path (with the query), headers:
# [[name, value]], body}; the answer is 200 {"allowed": true, "principal": <arn>} (the proxy
# then forwards the request to ministack) or the refusal as Route53 writes it, which the
# proxy returns to the caller as is. Asking moto over HTTP, from the proxy, keeps the one
# policy store and the one evaluator, and leaves ministack as it is.
#
# As Route53 authorizes (Service Authorization Reference, "Actions, resources, and condition
# keys for Amazon Route 53", docs.aws.amazon.com/service-authorization/latest/reference/
# list_amazonroute53.html): ListHostedZonesByName takes no resource ("*"); GetHostedZone,
# ListResourceRecordSets, ChangeResourceRecordSets and ListTagsForResource (of a hosted zone)
# are on arn:aws:route53:::hostedzone/<id>; GetChange on arn:aws:route53:::change/<id>. The
# caller is the access key of the SigV4 Credential= of the Authorization header, its signature
# checked as moto checks EC2's. A refusal is HTTP 403 in Route53's REST-XML error shape
# (<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender
# </Type><Code>AccessDenied</Code>..., as quoted in ansible/workshops#1054), its message
# "User: <arn> is not authorized to perform: route53:<Action> on resource: <arn>" (quoted in
# go-acme/lego#716 and awslabs/route53-dynamic-dns-with-lambda#13; without " on resource"
# for an action on "*", cert-manager/cert-manager#2011). A call not in this table is refused
# (never a silent allow).
import uuid as _uuid

from moto.core import DEFAULT_ACCOUNT_ID
from moto.iam.models import get_account_id_from
from moto.moto_api._internal import urls as _moto_api_urls
from werkzeug.datastructures import Headers as _Headers

_ROUTE53_CALLS = [
    ("GET", r"/2013-04-01/hostedzonesbyname/?", "ListHostedZonesByName", None),
    ("GET", r"/2013-04-01/tags/hostedzone/([^/]+)/?", "ListTagsForResource", "hostedzone"),
    ("GET", r"/2013-04-01/hostedzone/([^/]+)/?", "GetHostedZone", "hostedzone"),
    ("GET", r"/2013-04-01/hostedzone/([^/]+)/rrset/?", "ListResourceRecordSets", "hostedzone"),
    ("POST", r"/2013-04-01/hostedzone/([^/]+)/rrset/?", "ChangeResourceRecordSets", "hostedzone"),
    ("GET", r"/2013-04-01/change/([^/]+)/?", "GetChange", "change"),
]


def route53_call(method, path):
    """(IAM action without the prefix, resource ARN) of a Route53 REST call, or None."""
    bare = path.split("?", 1)[0]
    for verb, pattern, action, kind in _ROUTE53_CALLS:
        found = _re.fullmatch(pattern, bare)
        if verb == method and found:
            return action, (f"arn:aws:route53:::{kind}/{found.group(1)}" if kind else "*")
    return None


class _Route53Refusal(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class _Route53Request(access_control.IAMRequest):
    def _raise_invalid_access_key(self, _reason):
        raise _Route53Refusal("InvalidClientTokenId", "The security token included in the request is invalid.")

    def _raise_signature_does_not_match(self):
        raise _Route53Refusal("SignatureDoesNotMatch",
                              "The request signature we calculated does not match the signature you provided. "
                              "Check your AWS Secret Access Key and signing method. "
                              "Consult the service documentation for details.")


def _route53_refusal(code, message):
    body = ('<?xml version="1.0"?>\n<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/">'
            f"<Error><Type>Sender</Type><Code>{code}</Code><Message>{escape(message)}</Message></Error>"
            f"<RequestId>{_uuid.uuid4()}</RequestId></ErrorResponse>")
    return 403, {"Content-Type": "text/xml"}, body


def authorize_route53(request, full_url, headers):
    if request.method != "POST":
        return 400, {}, _json.dumps({"Error": "POST {method, path, headers, body}"})
    ask = _json.loads(request.data.decode())
    method, path = ask["method"], ask["path"]
    call = route53_call(method, path)
    if call is None:
        return _route53_refusal("AccessDenied", f"bootstrap-sim: {method} {path} is not a Route53 call "
                                                "moto_server.py authorizes")
    action, resource = call
    # Names as moto's own requests carry them (it reads headers["X-Amz-Date"] from a plain
    # dict); SigV4 signs them lower-cased, so the casing changes no signature.
    sent = _Headers([("-".join(p.capitalize() for p in k.split("-")), v) for k, v in ask["headers"]])
    if "Authorization" not in sent:
        return _route53_refusal("MissingAuthenticationToken", "Missing Authentication Token")
    key = _credential_key(sent)
    try:
        iam = _Route53Request(account_id=get_account_id_from(key) if key else DEFAULT_ACCOUNT_ID,
                              method=method, path=path, data={}, body=ask["body"].encode(),
                              headers=sent, action=action)
        iam.check_signature()
    except _Route53Refusal as refused:
        return _route53_refusal(refused.code, refused.message)
    principal = iam._access_key.arn
    if not _permitted(iam, iam._action, resource, {}):
        on = "" if resource == "*" else f" on resource: {resource}"
        return _route53_refusal("AccessDenied", f"User: {principal} is not authorized to perform: {iam._action}{on}")
    return 200, {"Content-Type": "application/json"}, _json.dumps({"allowed": True, "principal": principal})


def _credential_key(sent):
    """The access key id of the Credential= of an Authorization header."""
    scope = sent["Authorization"].partition("Credential=")[2].partition(",")[0]
    return scope.split("/")[0]


_moto_api_urls.url_paths["{0}/moto-api/authorize"] = authorize_route53

if __name__ == "__main__":
    sys.argv[0] = "moto_server"
    sys.exit(main())
