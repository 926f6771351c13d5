"""ministack, with Route53 made faithful where the agent depends on it.

- A name holds one CNAME or record sets of other types, never both (RFC 1034 3.6.2). Real
  Route53 refuses the batch with InvalidChangeBatch: "RRSet of type A with DNS name
  api.example.com. is not permitted because a conflicting RRSet of type CNAME with the same
  DNS name already exists in zone example.com." (as quoted in presslabs/zinc#178 and
  RJPearson94/terraform-aws-open-next#24), and the other way round "RRSet of type CNAME with
  DNS name x. is not permitted as it conflicts with other records with the same DNS name in
  zone z." (aws/aws-sdk-java#1996). ministack accepts both.
- A change stays PENDING until it has propagated: AWS documents "generally within 60
  seconds"; ministack flips it to INSYNC at the second GetChange. With
  MINISTACK_CHANGE_PROPAGATION_MS set, a change is PENDING for that long after it was made,
  then INSYNC (unset or 0: ministack's own behaviour).
- ListResourceRecordSets lists in Route53's order: "first by DNS name with the labels
  reversed, for example: com.example.www." in ASCII order, where "the trailing dot ... can
  change the sort order when the record name contains characters that appear before ."
  (API reference, ListResourceRecordSets, "Sort order"): `api-int.` before `api.`. ministack
  compares the reversed labels one by one, which puts `api` first.

Usage: python ministack_server.py (ministack's environment: BIND_HOST, GATEWAY_PORT, ...)
"""
import os
import threading
import time

from ministack.services import route53 as r53
from ministack.app import main

PROPAGATION = float(os.environ.get("MINISTACK_CHANGE_PROPAGATION_MS", "0")) / 1000.0

_due = {}
_due_lock = threading.Lock()
_ministack_change_id = r53._change_id
_ministack_get_change = r53._get_change
_ministack_change_rrsets = r53._change_resource_record_sets


def _change_id():
    change_id = _ministack_change_id()
    if PROPAGATION > 0:
        with _due_lock:
            _due[change_id] = time.monotonic() + PROPAGATION
    return change_id


def _get_change(change_id):
    with _due_lock:
        due = _due.get(change_id)
    if due is not None:
        with r53._lock:
            change = r53._changes.get(change_id)
            if change is not None:
                change["status"] = "PENDING" if time.monotonic() < due else "INSYNC"
    return _ministack_get_change(change_id)


def _cname_refusal(zone_id, body):
    """The InvalidChangeBatch real Route53 answers for a batch that would put a CNAME and
    another type at one name, or None."""
    root = r53._parse_body(body)
    if root is None:
        return None
    batch = r53._find(root, "ChangeBatch")
    changes = r53._find(batch, "Changes") if batch is not None else None
    if changes is None:
        return None
    with r53._lock:
        zone = r53._zones.get(zone_id)
        if not zone:
            return None
        current = {(r["Name"], r["Type"]) for r in r53._records[zone_id]}
    zone_name = zone.get("name", "")
    for change in r53._findall(changes, "Change"):
        action = r53._text(change, "Action")
        rs_el = r53._find(change, "ResourceRecordSet")
        if rs_el is None:
            continue
        rs = r53._parse_record_set(rs_el)
        name, rtype = rs.get("Name", ""), rs.get("Type", "")
        if action == "DELETE":
            current.discard((name, rtype))
            continue
        types_here = {t for (n, t) in current if n == name}
        if rtype != "CNAME" and "CNAME" in types_here:
            return r53._error_response(
                "InvalidChangeBatch",
                f"[RRSet of type {rtype} with DNS name {name} is not permitted because a "
                f"conflicting RRSet of type CNAME with the same DNS name already exists in "
                f"zone {zone_name}]",
            )
        if rtype == "CNAME" and types_here - {"CNAME"}:
            return r53._error_response(
                "InvalidChangeBatch",
                f"[RRSet of type CNAME with DNS name {name} is not permitted as it conflicts "
                f"with other records with the same DNS name in zone {zone_name}]",
            )
        current.add((name, rtype))
    return None


def _change_resource_record_sets(zone_id, body):
    refused = _cname_refusal(zone_id, body)
    if refused is not None:
        return refused
    return _ministack_change_rrsets(zone_id, body)


def _name_sort_key(name):
    """Route53's listing order: the labels reversed, with the trailing dot, as ASCII."""
    labels = r53._normalise_name(name).rstrip(".").split(".")
    return ".".join(reversed(labels)).lower() + "."


r53._name_sort_key = _name_sort_key
r53._change_id = _change_id
r53._get_change = _get_change
r53._change_resource_record_sets = _change_resource_record_sets

if __name__ == "__main__":
    main()
