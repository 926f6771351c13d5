"""Oracle for the GCP fake: google-api-python-client, built from the discovery documents it
ships (static_discovery=True), pointed at the fake with anonymous credentials. It drives the
calls the agent makes and prints what the official client saw as JSON; the Rust test
(tests/gcp_fake.rs) asserts on it. Any response the client cannot parse fails here."""

import argparse
import json
import sys
import time
import uuid

from google.auth.credentials import AnonymousCredentials
from googleapiclient.discovery import build
from googleapiclient.errors import HttpError

P, R = "example-project", "us-central1"
SUBNET = f"projects/{P}/regions/{R}/subnetworks/mycluster-master-subnet"


def error_of(call):
    """(status, reason, envelope status) of a call that must fail."""
    try:
        call.execute()
    except HttpError as e:
        body = json.loads(e.content.decode())
        err = body["error"]
        return {"code": e.status_code, "reason": err["errors"][0]["reason"], "status": err.get("status")}
    return None


def wait_done(compute, op):
    seen = [op["status"]]
    while op["status"] != "DONE":
        time.sleep(0.05)
        op = compute.regionOperations().get(project=P, region=R, operation=op["name"]).execute()
        seen.append(op["status"])
    return op, seen


def instance_checks(compute, name):
    """instances.get, updateNetworkInterface (a /32 alias GCE picks), zoneOperations.wait."""
    Z = "us-central1-a"
    out = {}
    vm = compute.instances().get(project=P, zone=Z, instance=name).execute()
    nic = vm["networkInterfaces"][0]
    out["before"] = {k: nic.get(k) for k in ("name", "networkIP", "aliasIpRanges", "stackType")}
    out["status"] = vm["status"]
    op = compute.instances().updateNetworkInterface(
        project=P, zone=Z, instance=name, networkInterface="nic0",
        body={"fingerprint": nic["fingerprint"], "aliasIpRanges": [{"ipCidrRange": "/32"}]}).execute()
    out["first_status"] = op["status"]
    done = compute.zoneOperations().wait(project=P, zone=Z, operation=op["name"]).execute()
    out["wait_status"] = done["status"]
    after = compute.instances().get(project=P, zone=Z, instance=name).execute()["networkInterfaces"][0]
    out["after"] = after.get("aliasIpRanges")
    out["fingerprint_changed"] = after["fingerprint"] != nic["fingerprint"]
    out["stale"] = error_of(compute.instances().updateNetworkInterface(
        project=P, zone=Z, instance=name, networkInterface="nic0",
        body={"fingerprint": nic["fingerprint"], "aliasIpRanges": []}))
    out["missing"] = error_of(compute.instances().get(project=P, zone=Z, instance="nope"))
    return out


def node_change_checks(compute, name):
    """A VM added after the start (zone us-central1-a): read, then behind load balancers as
    the GCE CCM puts a new Node: instanceGroups.addInstances to an unmanaged group of its
    zone, targetPools.addInstance; each a second time (refused)."""
    Z = "us-central1-a"
    out = {}
    vm = compute.instances().get(project=P, zone=Z, instance=name).execute()
    out["networkIP"] = vm["networkInterfaces"][0]["networkIP"]
    ref = {"instances": [{"instance": vm["selfLink"]}]}
    op = compute.instanceGroups().insert(project=P, zone=Z, body={"name": "k8s-ig--oracle"}).execute()
    compute.zoneOperations().wait(project=P, zone=Z, operation=op["name"]).execute()
    add = lambda: compute.instanceGroups().addInstances(
        project=P, zone=Z, instanceGroup="k8s-ig--oracle", body=ref)
    op = add().execute()
    out["add_to_group"] = compute.zoneOperations().wait(project=P, zone=Z, operation=op["name"]).execute()["status"]
    listed = compute.instanceGroups().listInstances(
        project=P, zone=Z, instanceGroup="k8s-ig--oracle", body={"instanceState": "ALL"}).execute()
    out["group_members"] = [i["instance"].rsplit("/", 1)[-1] for i in listed.get("items", [])]
    out["group_again"] = error_of(add())
    op = compute.targetPools().insert(project=P, region=R, body={"name": "a-oracle-pool"}).execute()
    compute.regionOperations().wait(project=P, region=R, operation=op["name"]).execute()
    add = lambda: compute.targetPools().addInstance(project=P, region=R, targetPool="a-oracle-pool", body=ref)
    op = add().execute()
    out["add_to_pool"] = compute.regionOperations().wait(project=P, region=R, operation=op["name"]).execute()["status"]
    pool = compute.targetPools().get(project=P, region=R, targetPool="a-oracle-pool").execute()
    out["pool_members"] = [i.rsplit("/", 1)[-1] for i in pool.get("instances", [])]
    out["pool_again"] = error_of(add())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--in-use", help="only: the address NAME, which a forwarding rule uses")
    ap.add_argument("--instance", help="only: nic0 of the VM NAME (zone us-central1-a) and an alias")
    ap.add_argument("--node-change", help="only: the VM NAME (us-central1-a) into a group and a target pool")
    a = ap.parse_args()
    creds = AnonymousCredentials()
    compute = build("compute", "v1", static_discovery=True, credentials=creds,
                    client_options={"api_endpoint": a.endpoint + "/compute/v1/"})
    if a.node_change:
        json.dump(node_change_checks(compute, a.node_change), sys.stdout)
        return
    if a.instance:
        json.dump(instance_checks(compute, a.instance), sys.stdout)
        return
    if a.in_use:
        # An address in use: its status and users, the delete refused, the address kept.
        get = lambda: compute.addresses().get(project=P, region=R, address=a.in_use).execute()
        before = get()
        json.dump({"status": before["status"], "users": before.get("users", []),
                   "delete": error_of(compute.addresses().delete(project=P, region=R, address=a.in_use)),
                   "after": get()["status"]}, sys.stdout)
        return
    dns = build("dns", "v1", static_discovery=True, credentials=creds,
                client_options={"api_endpoint": a.endpoint + "/"})
    out = {}
    labels = {"kubernetes-io-cluster-oracle-1": "owned", "bootstrap-agent-reservation": "public-ipv4"}

    # Insert with a requestId: an Operation that is not DONE yet, then polled to DONE.
    rid = str(uuid.uuid4())
    op = compute.addresses().insert(project=P, region=R, requestId=rid, body={
        "name": "oracle-ext", "addressType": "EXTERNAL", "labels": labels}).execute()
    out["insert_kind"] = op["kind"]
    out["insert_first_status"] = op["status"]
    done, seen = wait_done(compute, op)
    out["insert_statuses"] = seen
    # The same requestId again: the same operation, no second address.
    again = compute.addresses().insert(project=P, region=R, requestId=rid, body={
        "name": "oracle-ext", "addressType": "EXTERNAL", "labels": labels}).execute()
    out["replay_same_operation"] = again["name"] == op["name"]
    ext = compute.addresses().get(project=P, region=R, address="oracle-ext").execute()
    out["external"] = {k: ext.get(k) for k in ("address", "status", "addressType", "labels", "networkTier")}

    # INTERNAL from the subnetwork's range, purpose SHARED_LOADBALANCER_VIP.
    op = compute.addresses().insert(project=P, region=R, requestId=str(uuid.uuid4()), body={
        "name": "oracle-int", "addressType": "INTERNAL", "purpose": "SHARED_LOADBALANCER_VIP",
        "subnetwork": SUBNET}).execute()
    # regionOperations.wait blocks until DONE.
    waited = compute.regionOperations().wait(project=P, region=R, operation=op["name"]).execute()
    out["wait_status"] = waited["status"]
    internal = compute.addresses().get(project=P, region=R, address="oracle-int").execute()
    out["internal"] = {k: internal.get(k) for k in ("address", "status", "purpose", "subnetwork")}

    # An explicit address already in use: the operation fails, nothing is created.
    op = compute.addresses().insert(project=P, region=R, body={
        "name": "oracle-int-dup", "addressType": "INTERNAL", "subnetwork": SUBNET,
        "address": internal["address"]}).execute()
    done, _ = wait_done(compute, op)
    out["in_use_error"] = done.get("error", {}).get("errors", [{}])[0].get("code")
    out["in_use_created"] = error_of(compute.addresses().get(project=P, region=R, address="oracle-int-dup")) is None

    # A subnetwork named under a project that does not hold it (as a Shared VPC subnet named
    # under the service project would be): refused at once, nothing created.
    wrong = f"projects/other-project/regions/{R}/subnetworks/mycluster-master-subnet"
    try:
        compute.addresses().insert(project=P, region=R, body={
            "name": "oracle-int-wrong", "addressType": "INTERNAL", "subnetwork": wrong}).execute()
        out["wrong_project_subnetwork"] = None
    except HttpError as e:
        err = json.loads(e.content.decode())["error"]
        out["wrong_project_subnetwork"] = {"code": e.status_code, "reason": err["errors"][0]["reason"],
                                           "status": err.get("status"), "message": err["message"]}
    out["wrong_project_created"] = error_of(
        compute.addresses().get(project=P, region=R, address="oracle-int-wrong")) is None

    # Errors in Google's envelope.
    out["duplicate_name"] = error_of(compute.addresses().insert(project=P, region=R, body={
        "name": "oracle-ext", "addressType": "EXTERNAL"}))
    out["missing"] = error_of(compute.addresses().get(project=P, region=R, address="nope"))
    out["bad_request_id"] = error_of(compute.addresses().insert(project=P, region=R, requestId="not-a-uuid",
                                                                body={"name": "x1"}))
    out["bad_label"] = error_of(compute.addresses().insert(project=P, region=R, body={
        "name": "x2", "labels": {"Upper": "x"}}))

    # list with a label filter, and pagination through the client's list_next.
    flt = '(labels.kubernetes-io-cluster-oracle-1 = "owned") (labels.bootstrap-agent-reservation:*)'
    listed = compute.addresses().list(project=P, region=R, filter=flt).execute()
    out["filtered"] = [i["name"] for i in listed.get("items", [])]
    names, req = [], compute.addresses().list(project=P, region=R, maxResults=1)
    while req is not None:
        page = req.execute()
        names.extend(i["name"] for i in page.get("items", []))
        req = compute.addresses().list_next(req, page)
    out["paged"] = names

    # Preflight's reads: the project, the region's address quotas (usage counts what exists:
    # oracle-ext is EXTERNAL, oracle-int INTERNAL), a subnetwork, and a missing one.
    project = compute.projects().get(project=P).execute()
    out["project"] = {k: project.get(k) for k in ("kind", "name")}
    region = compute.regions().get(project=P, region=R).execute()
    out["quotas"] = {q["metric"]: [q["limit"], q["usage"]] for q in region["quotas"]
                     if q["metric"] in ("STATIC_ADDRESSES", "INTERNAL_ADDRESSES")}
    subnet = compute.subnetworks().get(project=P, region=R, subnetwork="mycluster-master-subnet").execute()
    out["subnetwork"] = {k: subnet.get(k) for k in ("kind", "network", "ipCidrRange")}
    out["missing_subnetwork"] = error_of(compute.subnetworks().get(project=P, region=R, subnetwork="nope"))

    # delete: an operation; afterwards the address is gone.
    op = compute.addresses().delete(project=P, region=R, address="oracle-ext").execute()
    wait_done(compute, op)
    out["deleted"] = error_of(compute.addresses().get(project=P, region=R, address="oracle-ext"))

    # Cloud DNS: zones by dnsName, with visibility.
    zones = dns.managedZones().list(project=P, dnsName="mycluster.example.com.").execute()
    out["zones"] = sorted((z["name"], z["visibility"]) for z in zones["managedZones"])
    zone = "mycluster-7xk2p-private-zone"
    api = {"name": "api.mycluster.example.com.", "type": "A", "ttl": 60, "rrdatas": ["10.0.0.5"]}
    change = dns.changes().create(project=P, managedZone=zone, body={"additions": [api]}).execute()
    out["change_first_status"] = change["status"]
    while change["status"] != "done":
        time.sleep(0.05)
        change = dns.changes().get(project=P, managedZone=zone, changeId=change["id"]).execute()
    rrsets = dns.resourceRecordSets().list(project=P, managedZone=zone, name=api["name"], type="A").execute()
    out["rrsets"] = rrsets["rrsets"]

    # A deletion that does not match (other rrdatas) fails the whole change: 412, and the
    # addition in the same change is not applied.
    stale = dict(api, rrdatas=["10.0.0.6"])
    other = {"name": "api-int.mycluster.example.com.", "type": "A", "ttl": 60, "rrdatas": ["10.0.0.5"]}
    out["stale_deletion"] = error_of(dns.changes().create(project=P, managedZone=zone, body={
        "deletions": [stale], "additions": [other]}))
    out["stale_ttl"] = error_of(dns.changes().create(project=P, managedZone=zone, body={
        "deletions": [dict(api, ttl=300)]}))
    after = dns.resourceRecordSets().list(project=P, managedZone=zone, name=other["name"], type="A").execute()
    out["atomic"] = after.get("rrsets", []) == []
    out["missing_deletion"] = error_of(dns.changes().create(project=P, managedZone=zone, body={
        "deletions": [other]}))
    out["existing_addition"] = error_of(dns.changes().create(project=P, managedZone=zone, body={
        "additions": [api]}))
    # The exact set read: replaced in one change.
    new = dict(api, rrdatas=["10.0.0.5", "10.0.0.7"])
    dns.changes().create(project=P, managedZone=zone, body={"deletions": [api], "additions": [new]}).execute()
    rrsets = dns.resourceRecordSets().list(project=P, managedZone=zone, name=api["name"], type="A").execute()
    out["replaced"] = sorted(rrsets["rrsets"][0]["rrdatas"])
    private = dns.managedZones().get(project=P, managedZone=zone).execute()
    out["private_networks"] = [n["networkUrl"] for n in private["privateVisibilityConfig"]["networks"]]
    out["missing_zone"] = error_of(dns.resourceRecordSets().list(project=P, managedZone="nope"))

    # Cloud Resource Manager v1 projects.testIamPermissions (every permission granted here).
    crm = build("cloudresourcemanager", "v1", static_discovery=True, credentials=creds,
                client_options={"api_endpoint": a.endpoint + "/"})
    test = lambda project, perms: crm.projects().testIamPermissions(
        resource=project, body={"permissions": perms})
    out["iam_held"] = test(P, ["dns.changes.create", "compute.subnetworks.use"]).execute()
    out["iam_wildcard"] = error_of(test(P, ["compute.*"]))
    out["iam_unknown_permission"] = error_of(test(P, ["compute.addresses.frobnicate"]))
    out["iam_unknown_project"] = error_of(test("nope", ["dns.changes.create"]))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
