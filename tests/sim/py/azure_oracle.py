"""The official Azure management clients as oracles for the local ARM fake.

azure-mgmt-network, azure-mgmt-dns and azure-mgmt-privatedns are pointed at the fake with
`base_url`. The fake's ARM listener is plain HTTP (so the counting proxy can sit in front of it),
and azure-core's BearerTokenCredentialPolicy refuses to send a token over http. So the clients
get `authentication_policy=StaticBearer(token)`, a policy override that sets the same
`Authorization: Bearer` header without the https check; the trivial TokenCredential is still
passed because the client constructors require one. The token comes from the fake.

Prints one JSON object: what each call returned (or the HTTP status and ARM error code it
raised). The Rust test asserts on it and on the fake's own state.
"""

import argparse
import json
import sys
import time

from azure.core import MatchConditions
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.core.pipeline.policies import SansIOHTTPPolicy
from azure.mgmt.dns import DnsManagementClient
from azure.mgmt.dns import models as dnsm
from azure.mgmt.network import NetworkManagementClient
from azure.mgmt.network.models import PublicIPAddress, PublicIPAddressSku
from azure.mgmt.privatedns import PrivateDnsManagementClient
from azure.mgmt.privatedns import models as pdnsm

SUB = "00000000-0000-0000-0000-000000000001"
RG = "mycluster-7xk2p-rg"
DNS_RG = "dns-rg"
NET_RG = "network-rg"
VNET = "mycluster-vnet"
SUBNET = "mycluster-worker-subnet"
FAST = {"polling_interval": 0.05}


class Cred:
    """A trivial TokenCredential."""

    def __init__(self, token):
        self.token = token

    def get_token(self, *scopes, **kwargs):
        return AccessToken(self.token, int(time.time()) + 3600)


class StaticBearer(SansIOHTTPPolicy):
    def __init__(self, token):
        self.token = token

    def on_request(self, request):
        request.http_request.headers["Authorization"] = "Bearer " + self.token


def failure(fn):
    try:
        fn()
    except HttpResponseError as e:
        code = e.error.code if e.error is not None else None
        return {"status": e.status_code, "code": code}
    return {"status": "no error"}


def clients(arm, token):
    kw = {"base_url": arm, "authentication_policy": StaticBearer(token)}
    cred = Cred(token)
    return (
        NetworkManagementClient(cred, SUB, **kw),
        DnsManagementClient(cred, SUB, **kw),
        # The agent speaks Private DNS 2020-06-01; this client defaults to 2024-06-01.
        PrivateDnsManagementClient(cred, SUB, api_version="2020-06-01", **kw),
    )


def network_checks(net):
    out = {}
    tags = {"kubernetes.io_cluster.oracle": "owned"}
    pips = {}
    for name, version in [("oracle-v4", "IPv4"), ("oracle-v6", "IPv6"), ("oracle-a", "IPv4"), ("oracle-b", "IPv4")]:
        poller = net.public_ip_addresses.begin_create_or_update(
            RG,
            name,
            PublicIPAddress(
                location="eastus",
                sku=PublicIPAddressSku(name="Standard", tier="Regional"),
                public_ip_allocation_method="Static",
                public_ip_address_version=version,
                tags=tags,
            ),
            **FAST,
        )
        pip = poller.result()
        pips[name] = {
            "state": pip.provisioning_state,
            "ip": pip.ip_address,
            "version": pip.public_ip_address_version,
            "sku": pip.sku.name,
            "tags": pip.tags,
        }
    out["created"] = pips
    got = net.public_ip_addresses.get(RG, "oracle-v4")
    out["get_ip"] = got.ip_address
    out["listed"] = sorted(p.name for p in net.public_ip_addresses.list(RG))
    net.public_ip_addresses.begin_delete(RG, "oracle-b", **FAST).result()
    out["after_delete"] = failure(lambda: net.public_ip_addresses.get(RG, "oracle-b"))
    out["delete_absent"] = failure(lambda: net.public_ip_addresses.begin_delete(RG, "never-was", **FAST).result())
    out["dynamic_standard"] = failure(
        lambda: net.public_ip_addresses.begin_create_or_update(
            RG,
            "bad",
            PublicIPAddress(location="eastus", sku=PublicIPAddressSku(name="Standard"),
                            public_ip_allocation_method="Dynamic"),
            **FAST,
        ).result()
    )
    out["no_location"] = failure(
        lambda: net.public_ip_addresses.begin_create_or_update(
            RG, "bad", PublicIPAddress(sku=PublicIPAddressSku(name="Standard")), **FAST).result()
    )
    taken = net.virtual_networks.check_ip_address_availability(NET_RG, VNET, ip_address="10.0.1.254")
    free = net.virtual_networks.check_ip_address_availability(NET_RG, VNET, ip_address="10.0.1.200")
    reserved = net.virtual_networks.check_ip_address_availability(NET_RG, VNET, ip_address="10.0.1.1")
    out["check_taken"] = {"available": taken.available, "suggestions": taken.available_ip_addresses}
    out["check_free"] = {"available": free.available}
    out["check_reserved"] = {"available": reserved.available, "platform": reserved.is_platform_reserved}
    out["subnet_prefix"] = net.subnets.get(NET_RG, VNET, SUBNET).address_prefix
    out["missing_rg"] = failure(lambda: net.public_ip_addresses.get("nope-rg", "x"))
    out["usages"] = {u.name.value: [u.current_value, u.limit, u.unit] for u in net.usages.list("eastus")}
    return out


def dns_checks(dns):
    out = {}
    zone = dns.zones.get(DNS_RG, "example.com")
    out["zone"] = {"name": zone.name, "type": zone.zone_type}
    params = dnsm.RecordSet(ttl=60, a_records=[dnsm.ARecord(ipv4_address="192.0.2.1")])
    first = dns.record_sets.create_or_update(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", parameters=params, if_none_match="*",
    )
    out["create"] = {"ttl": first.ttl, "values": [r.ipv4_address for r in first.a_records], "fqdn": first.fqdn}
    out["create_again"] = failure(lambda: dns.record_sets.create_or_update(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", parameters=params, if_none_match="*",
    ))
    params2 = dnsm.RecordSet(ttl=60, a_records=[dnsm.ARecord(ipv4_address="192.0.2.1"),
                                                dnsm.ARecord(ipv4_address="192.0.2.2")])
    second = dns.record_sets.create_or_update(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", parameters=params2, if_match=first.etag,
    )
    out["etag_changed"] = second.etag != first.etag
    out["stale_update"] = failure(lambda: dns.record_sets.create_or_update(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", parameters=params, if_match=first.etag,
    ))
    got = dns.record_sets.get(DNS_RG, "example.com", "oracle", "A")
    out["get"] = sorted(r.ipv4_address for r in got.a_records)
    out["stale_delete"] = failure(lambda: dns.record_sets.delete(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", if_match=first.etag,
    ))
    dns.record_sets.delete(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle",
        record_type="A", if_match=second.etag,
    )
    out["after_delete"] = failure(lambda: dns.record_sets.get(DNS_RG, "example.com", "oracle", "A"))
    v6 = dns.record_sets.create_or_update(
        resource_group_name=DNS_RG, zone_name="example.com", relative_record_set_name="oracle6",
        record_type="AAAA", parameters=dnsm.RecordSet(ttl=60, aaaa_records=[dnsm.AaaaRecord(ipv6_address="2001:db8::1")]),
    )
    out["aaaa"] = [r.ipv6_address for r in v6.aaaa_records]
    out["missing_zone"] = failure(lambda: dns.zones.get(DNS_RG, "nope.example.com"))
    return out


def private_checks(pdns):
    out = {}
    zone = pdns.private_zones.get(RG, "mycluster.example.com")
    out["zone"] = zone.name
    kw = {"resource_group_name": RG, "private_zone_name": "mycluster.example.com", "record_type": "A",
          "relative_record_set_name": "oracle"}
    params = pdnsm.RecordSet(properties=pdnsm.RecordSetProperties(
        ttl=60, a_records=[pdnsm.ARecord(ipv4_address="10.0.1.99")]))
    # azure-mgmt-privatedns 2.x spells the conditions as etag + MatchConditions:
    # IfMissing -> If-None-Match: *, IfNotModified -> If-Match: <etag>.
    missing = {"match_condition": MatchConditions.IfMissing}

    def unchanged(etag):
        return {"etag": etag, "match_condition": MatchConditions.IfNotModified}

    first = pdns.record_sets.create_or_update(parameters=params, **missing, **kw)
    out["create"] = {"ttl": first.properties.ttl, "values": [r.ipv4_address for r in first.properties.a_records],
                     "fqdn": first.properties.fqdn}
    out["create_again"] = failure(lambda: pdns.record_sets.create_or_update(parameters=params, **missing, **kw))
    second = pdns.record_sets.create_or_update(
        parameters=pdnsm.RecordSet(properties=pdnsm.RecordSetProperties(
            ttl=60, a_records=[pdnsm.ARecord(ipv4_address="10.0.1.99"), pdnsm.ARecord(ipv4_address="10.0.1.98")])),
        **unchanged(first.etag), **kw,
    )
    out["stale_update"] = failure(lambda: pdns.record_sets.create_or_update(
        parameters=params, **unchanged(first.etag), **kw))
    out["get"] = sorted(r.ipv4_address for r in pdns.record_sets.get(
        RG, "mycluster.example.com", "A", "oracle").properties.a_records)
    out["stale_delete"] = failure(lambda: pdns.record_sets.delete(**unchanged(first.etag), **kw))
    pdns.record_sets.delete(**unchanged(second.etag), **kw)
    out["after_delete"] = failure(lambda: pdns.record_sets.get(RG, "mycluster.example.com", "A", "oracle"))
    out["links"] = [
        {"name": link.name, "vnet": link.virtual_network.id, "state": link.virtual_network_link_state,
         "registration": link.registration_enabled}
        for link in pdns.virtual_network_links.list(RG, "mycluster.example.com")
    ]
    return out


def dual_stack_checks(net):
    """A dual-stack subnet as the official client reads it, and the fake's IPv6 refusal."""
    subnet = net.subnets.get(NET_RG, VNET, SUBNET)
    return {
        "address_prefix": subnet.address_prefix,
        "address_prefixes": subnet.address_prefixes,
        "check_ipv6": failure(lambda: net.virtual_networks.check_ip_address_availability(
            NET_RG, VNET, ip_address="fd00:10:0:2::8")),
    }


def refusal_checks(net):
    """One public IP PUT, for the Rust test to set up a refusal (a role without write, a full
    quota) and read the status and ARM error code the official client raised."""
    return {
        "create": failure(lambda: net.public_ip_addresses.begin_create_or_update(
            RG, "oracle-refused",
            PublicIPAddress(location="eastus", sku=PublicIPAddressSku(name="Standard", tier="Regional"),
                            public_ip_allocation_method="Static"),
            **FAST,
        ).result()),
        "read": failure(lambda: net.subnets.get(NET_RG, VNET, SUBNET)),
    }


def in_use_checks(net, name):
    """A public IP a load balancer frontend uses: what the official client reads of it, its
    delete refused, and the address still there afterwards."""
    before = net.public_ip_addresses.get(RG, name)
    out = {
        "ip_configuration": before.ip_configuration.id if before.ip_configuration else None,
        "delete": failure(lambda: net.public_ip_addresses.begin_delete(RG, name, **FAST).result()),
    }
    try:
        out["after"] = net.public_ip_addresses.get(RG, name).provisioning_state
    except HttpResponseError as e:
        out["after"] = e.status_code
    return out


def nic_checks(net, name):
    """The NIC as the SDK models it; a Dynamic secondary ipConfiguration added by a whole PUT
    (the long-running operation followed to the end), then removed the same way."""
    from azure.mgmt.network.models import NetworkInterfaceIPConfiguration, Subnet

    def configs(nic):
        return [{"name": c.name, "ip": c.private_ip_address, "method": c.private_ip_allocation_method,
                 "version": c.private_ip_address_version, "primary": c.primary,
                 "subnet": c.subnet.id.rsplit("/", 1)[-1], "state": c.provisioning_state}
                for c in nic.ip_configurations]

    out = {}
    nic = net.network_interfaces.get(RG, name)
    out["before"] = configs(nic)
    out["etag"] = bool(nic.etag)
    primary = nic.ip_configurations[0]
    nic.ip_configurations.append(NetworkInterfaceIPConfiguration(
        name="bootstrap-vip", private_ip_allocation_method="Dynamic", primary=False,
        subnet=Subnet(id=primary.subnet.id)))
    added = net.network_interfaces.begin_create_or_update(RG, name, nic, **FAST).result()
    out["added"] = configs(added)
    out["added_state"] = added.provisioning_state
    added.ip_configurations = [c for c in added.ip_configurations if c.primary]
    removed = net.network_interfaces.begin_create_or_update(RG, name, added, **FAST).result()
    out["removed"] = configs(removed)
    out["missing"] = failure(lambda: net.network_interfaces.get(RG, "nope"))
    return out


def load_balancer_checks(net, nic_name, pip_name):
    """What cloud-provider-azure does to a load balancer, as the official client does it: an
    internal load balancer made with one Service's frontend, rule and probe, a second Service's
    rule on the same frontend (PUT with the etag), a stale etag refused, a node's NIC put in
    the backend pool, refusals; a public load balancer on a public IP; the NSG's rules."""
    from azure.mgmt.network import models as m

    lb_name = "mycluster-7xk2p-internal"
    lb_id = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network/loadBalancers/{lb_name}"
    subnet = net.subnets.get(NET_RG, VNET, SUBNET)

    def ref(kind, name):
        return m.SubResource(id=f"{lb_id}/{kind}/{name}")

    def rule(name, port, probe):
        return m.LoadBalancingRule(
            name=name, protocol="Tcp", frontend_port=port, backend_port=port,
            enable_floating_ip=True, enable_tcp_reset=True, idle_timeout_in_minutes=4,
            frontend_ip_configuration=ref("frontendIPConfigurations", "afront"),
            backend_address_pool=ref("backendAddressPools", "mycluster-7xk2p"),
            probe=ref("probes", probe))

    def probe(name, port):
        return m.Probe(name=name, protocol="Tcp", port=port, interval_in_seconds=5,
                       number_of_probes=2)

    lb = m.LoadBalancer(
        location="eastus", sku=m.LoadBalancerSku(name="Standard"),
        frontend_ip_configurations=[m.FrontendIPConfiguration(
            name="afront", subnet=m.Subnet(id=subnet.id), private_ip_address="10.0.1.20",
            private_ip_allocation_method="Static")],
        backend_address_pools=[m.BackendAddressPool(name="mycluster-7xk2p")],
        load_balancing_rules=[rule("afront-TCP-6443", 6443, "afront-TCP-6443")],
        probes=[probe("afront-TCP-6443", 30443)])
    out = {}
    made = net.load_balancers.begin_create_or_update(RG, lb_name, lb, **FAST).result()
    out["made"] = {"state": made.provisioning_state, "etag": bool(made.etag),
                   "frontend": made.frontend_ip_configurations[0].id,
                   "frontend_state": made.frontend_ip_configurations[0].provisioning_state}
    stale = made.etag
    made.load_balancing_rules.append(rule("bsecond-TCP-22623", 22623, "bsecond-TCP-22623"))
    made.probes.append(probe("bsecond-TCP-22623", 32623))
    shared = net.load_balancers.begin_create_or_update(
        RG, lb_name, made, headers={"If-Match": made.etag}, **FAST).result()
    out["shared_frontend_rules"] = sorted(
        r.id.rsplit("/", 1)[-1] for r in shared.frontend_ip_configurations[0].load_balancing_rules)
    made.etag = stale
    out["stale"] = failure(lambda: net.load_balancers.begin_create_or_update(
        RG, lb_name, made, headers={"If-Match": stale}, **FAST).result())
    nic = net.network_interfaces.get(RG, nic_name)
    nic.ip_configurations[0].load_balancer_backend_address_pools = [
        m.BackendAddressPool(id=shared.backend_address_pools[0].id)]
    net.network_interfaces.begin_create_or_update(RG, nic_name, nic, **FAST).result()
    pool = net.load_balancers.get(RG, lb_name).backend_address_pools[0]
    out["pool_members"] = [c.id.split("/networkInterfaces/")[1] for c in pool.backend_ip_configurations]
    bad = m.LoadBalancer(location="eastus", sku=m.LoadBalancerSku(name="Standard"),
                         frontend_ip_configurations=lb.frontend_ip_configurations,
                         load_balancing_rules=[rule("x", 1, "missing")])
    out["missing_probe"] = failure(
        lambda: net.load_balancers.begin_create_or_update(RG, "bad-lb", bad, **FAST).result())
    taken = m.LoadBalancer(location="eastus", sku=m.LoadBalancerSku(name="Standard"),
                           frontend_ip_configurations=[m.FrontendIPConfiguration(
                               name="f", subnet=m.Subnet(id=subnet.id),
                               private_ip_address="10.0.1.10",
                               private_ip_allocation_method="Static")])
    out["held_by_a_nic"] = failure(
        lambda: net.load_balancers.begin_create_or_update(RG, "bad-lb", taken, **FAST).result())
    pip = net.public_ip_addresses.get(RG, pip_name)
    public = m.LoadBalancer(location="eastus", sku=m.LoadBalancerSku(name="Standard"),
                            frontend_ip_configurations=[m.FrontendIPConfiguration(
                                name="apublic", public_ip_address=m.PublicIPAddress(id=pip.id))])
    net.load_balancers.begin_create_or_update(RG, "mycluster-7xk2p", public, **FAST).result()
    out["pip_user"] = net.public_ip_addresses.get(RG, pip_name).ip_configuration.id.rsplit("/", 3)[-3:]
    out["listed"] = sorted(lb.name for lb in net.load_balancers.list(RG))
    net.load_balancers.begin_delete(RG, "mycluster-7xk2p", **FAST).result()
    freed = net.public_ip_addresses.get(RG, pip_name).ip_configuration
    out["pip_user_after_delete"] = freed.id if freed else None
    out["missing"] = failure(lambda: net.load_balancers.get(RG, "mycluster-7xk2p"))
    net.load_balancers.begin_delete(RG, lb_name, **FAST).result()
    left = net.network_interfaces.get(RG, nic_name).ip_configurations[0]
    out["nic_pools_after_delete"] = [
        p.id for p in (left.load_balancer_backend_address_pools or [])]
    nsg = net.network_security_groups.get(RG, "mycluster-7xk2p-nsg")
    out["nsg_defaults"] = sorted(r.name for r in nsg.default_security_rules)
    old_etag = nsg.etag
    nsg.security_rules = [m.SecurityRule(
        name="k8s-azure-lb_allow_IPv4_x", protocol="Tcp", access="Allow", direction="Inbound",
        priority=500, source_address_prefix="Internet", source_port_range="*",
        destination_address_prefixes=[pip.ip_address], destination_port_ranges=["6443"])]
    put = net.network_security_groups.begin_create_or_update(
        RG, "mycluster-7xk2p-nsg", nsg, headers={"If-Match": old_etag}, **FAST).result()
    out["nsg_rules"] = [(r.name, r.destination_address_prefixes) for r in put.security_rules]
    out["nsg_stale"] = failure(lambda: net.network_security_groups.begin_create_or_update(
        RG, "mycluster-7xk2p-nsg", nsg, headers={"If-Match": old_etag}, **FAST).result())
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arm", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--dual-stack", action="store_true",
                        help="only read the dual-stack compute subnet")
    parser.add_argument("--refusal", action="store_true",
                        help="only try to create one public IP (and read a subnet)")
    parser.add_argument("--in-use", help="only: the public IP NAME a frontend uses")
    parser.add_argument("--nic", help="only: read the NIC NAME, add a Dynamic secondary, remove it")
    parser.add_argument("--load-balancer", nargs=2, metavar=("NIC", "PIP"),
                        help="only: load balancers on node NIC and public IP PIP, and the NSG")
    args = parser.parse_args()
    net, dns, pdns = clients(args.arm, args.token)
    if args.load_balancer:
        json.dump(load_balancer_checks(net, *args.load_balancer), sys.stdout, indent=1,
                  sort_keys=True)
        return
    if args.in_use:
        json.dump(in_use_checks(net, args.in_use), sys.stdout, indent=1, sort_keys=True)
        return
    if args.nic:
        json.dump(nic_checks(net, args.nic), sys.stdout, indent=1, sort_keys=True)
        return
    if args.dual_stack:
        json.dump(dual_stack_checks(net), sys.stdout, indent=1, sort_keys=True)
        return
    if args.refusal:
        json.dump(refusal_checks(net), sys.stdout, indent=1, sort_keys=True)
        return
    bad_net, _, _ = clients(args.arm, "not-a-token")
    result = {
        "network": network_checks(net),
        "dns": dns_checks(dns),
        "private": private_checks(pdns),
        "bad_token": failure(lambda: bad_net.public_ip_addresses.get(RG, "oracle-v4")),
    }
    json.dump(result, sys.stdout, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
