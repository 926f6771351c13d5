#!/usr/bin/env python3
"""Independent oracle for the fake kube-apiserver (bootstrap_sim::kube::KubeSim).

The official Kubernetes Python client talks to the fake through the kubeconfig it wrote
(HTTPS, CA data, bearer token). Each scenario prints one JSON document on stdout, which the
Rust test asserts on; an unexpected client error fails the scenario (exit 1).

    kube_oracle.py --kubeconfig PATH crud    --namespace NS
    kube_oracle.py --kubeconfig PATH apply   --namespace NS
    kube_oracle.py --kubeconfig PATH watch   --namespace NS --name SVC --resource-version RV
    kube_oracle.py --kubeconfig PATH gone    --namespace NS --resource-version RV
    kube_oracle.py --kubeconfig PATH dynamic
"""

import argparse
import json
import sys

from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

SERIALIZER = client.ApiClient()


def plain(obj):
    return SERIALIZER.sanitize_for_serialization(obj)


def failure(call):
    """Runs a call that must fail: {status, body} of the ApiException."""
    try:
        call()
    except ApiException as e:
        body = None
        if e.body:
            try:
                body = json.loads(e.body)
            except ValueError:
                body = e.body
        return {"status": e.status, "body": body}
    raise AssertionError("the call succeeded but should have failed")


def service(name, labels, ports, svc_type="ClusterIP"):
    return client.V1Service(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        spec=client.V1ServiceSpec(
            type=svc_type,
            selector={"app": name},
            ports=[client.V1ServicePort(name=n, port=p) for n, p in ports],
        ),
    )


def crud(args):
    api = client.CoreV1Api()
    ns = args.namespace
    out = {}
    out["namespace"] = plain(
        api.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    )
    out["namespaces"] = [n.metadata.name for n in api.list_namespace().items]
    out["created"] = plain(
        api.create_namespaced_service(
            ns, service("api", {"app": "api", "tier": "cp"}, [("https", 6443)])
        )
    )
    api.create_namespaced_service(ns, service("other", {"app": "other"}, [("mcs", 22623)]))
    out["read"] = plain(api.read_namespaced_service("api", ns))
    listed = api.list_namespaced_service(ns)
    out["list"] = {
        "kind": listed.kind,
        "resourceVersion": listed.metadata.resource_version,
        "names": [s.metadata.name for s in listed.items],
    }

    def names(**kw):
        return [s.metadata.name for s in api.list_namespaced_service(ns, **kw).items]

    out["selected"] = {
        "app=api": names(label_selector="app=api"),
        "app!=api": names(label_selector="app!=api"),
        "app in (api,other),tier": names(label_selector="app in (api,other),tier"),
        "!tier": names(label_selector="!tier"),
        "app notin (api)": names(label_selector="app notin (api)"),
        "metadata.name=other": names(field_selector="metadata.name=other"),
    }
    out["all_namespaces"] = sorted(
        f"{s.metadata.namespace}/{s.metadata.name}"
        for s in api.list_service_for_all_namespaces().items
    )
    out["already_exists"] = failure(
        lambda: api.create_namespaced_service(ns, service("api", {}, [("https", 6443)]))
    )
    out["not_found"] = failure(lambda: api.read_namespaced_service("missing", ns))
    no_ports = client.V1Service(
        metadata=client.V1ObjectMeta(name="noports"), spec=client.V1ServiceSpec(type="ClusterIP")
    )
    out["invalid_ports"] = failure(lambda: api.create_namespaced_service(ns, no_ports))
    out["invalid_name"] = failure(
        lambda: api.create_namespaced_service(ns, service("Bad_Name", {}, [("a", 1)]))
    )
    out["missing_namespace"] = failure(
        lambda: api.create_namespaced_service("nowhere", service("x", {}, [("a", 1)]))
    )
    stale = api.read_namespaced_service("api", ns)
    stale.metadata.labels["touched"] = "yes"
    out["replaced"] = plain(api.replace_namespaced_service("api", ns, stale))
    stale.metadata.labels["touched"] = "again"
    out["stale"] = failure(lambda: api.replace_namespaced_service("api", ns, stale))
    out["deleted"] = plain(api.delete_namespaced_service("other", ns))
    out["after_delete"] = names()
    cm = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm"), data={"k": "v"})
    api.create_namespaced_config_map(ns, cm)
    out["configmap_deleted"] = plain(api.delete_namespaced_config_map("cm", ns))
    print(json.dumps(out))


def apply_patch(api, ns, body, manager, force=None):
    kw = {"field_manager": manager, "_content_type": "application/apply-patch+yaml"}
    if force is not None:
        kw["force"] = force
    return api.patch_namespaced_service(body["metadata"]["name"], ns, body, **kw)


def apply(args):
    api = client.CoreV1Api()
    ns = args.namespace
    out = {}
    config_a = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lb", "labels": {"a": "1", "b": "2"}},
        "spec": {
            "type": "LoadBalancer",
            "selector": {"app": "lb"},
            "ports": [{"name": "api", "port": 6443, "targetPort": 6443}],
        },
    }
    out["first"] = plain(apply_patch(api, ns, config_a, "bootstrap-agent", force=True))
    out["again"] = plain(apply_patch(api, ns, config_a, "bootstrap-agent", force=True))
    other = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lb"},
        "spec": {"ports": [{"name": "api", "port": 7443, "targetPort": 7443}]},
    }
    out["conflict"] = failure(lambda: apply_patch(api, ns, other, "other-manager"))
    shared = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "lb", "labels": {"a": "1"}},
    }
    out["shared"] = plain(apply_patch(api, ns, shared, "label-keeper"))
    out["forced"] = plain(apply_patch(api, ns, other, "other-manager", force=True))
    config_b = json.loads(json.dumps(config_a))
    del config_b["metadata"]["labels"]
    del config_b["spec"]["ports"]
    out["pruned"] = plain(apply_patch(api, ns, config_b, "bootstrap-agent", force=True))
    out["missing_manager"] = failure(
        lambda: api.patch_namespaced_service(
            "lb", ns, config_a, _content_type="application/apply-patch+yaml"
        )
    )
    out["merge_patched"] = plain(
        api.patch_namespaced_service(
            "lb",
            ns,
            {"metadata": {"annotations": {"note": "x"}}},
            _content_type="application/merge-patch+json",
        )
    )
    out["json_patched"] = plain(
        api.patch_namespaced_service(
            "lb",
            ns,
            [{"op": "add", "path": "/metadata/labels/c", "value": "3"}],
            _content_type="application/json-patch+json",
        )
    )
    out["status_ignored"] = plain(
        api.patch_namespaced_service(
            "lb",
            ns,
            {"status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}},
            _content_type="application/merge-patch+json",
        )
    )
    print(json.dumps(out))


def watch_ingress(args):
    api = client.CoreV1Api()
    events = []
    w = watch.Watch()
    for ev in w.stream(
        api.list_namespaced_service,
        args.namespace,
        resource_version=args.resource_version,
        field_selector=f"metadata.name={args.name}",
        allow_watch_bookmarks=True,
        timeout_seconds=20,
    ):
        raw = ev["raw_object"]
        ingress = (raw.get("status") or {}).get("loadBalancer", {}).get("ingress")
        events.append(
            {
                "type": ev["type"],
                "resourceVersion": raw["metadata"]["resourceVersion"],
                "ingress": ingress,
            }
        )
        if ev["type"] == "MODIFIED" and ingress:
            w.stop()
    print(json.dumps({"events": events}))


def gone(args):
    api = client.CoreV1Api()
    out = {}
    resp = api.list_namespaced_service(
        args.namespace,
        watch=True,
        resource_version=args.resource_version,
        timeout_seconds=5,
        _preload_content=False,
    )
    out["raw_status"] = resp.status
    out["raw_first"] = json.loads(resp.readline())
    resp.release_conn()

    def stream():
        for _ in watch.Watch().stream(
            api.list_namespaced_service,
            args.namespace,
            resource_version=args.resource_version,
            timeout_seconds=5,
        ):
            pass

    out["watch"] = failure(stream)
    print(json.dumps(out))


def dynamic_client(args):
    dyn = dynamic.DynamicClient(client.ApiClient())
    out = {}
    cv = dyn.resources.get(api_version="config.openshift.io/v1", kind="ClusterVersion")
    out["resource"] = {"namespaced": cv.namespaced, "name": cv.name, "status": "status" in cv.subresources}
    body = {
        "apiVersion": "config.openshift.io/v1",
        "kind": "ClusterVersion",
        "metadata": {"name": "version"},
        "spec": {"clusterID": "abc", "capabilities": {"baselineCapabilitySet": "None"}},
    }
    out["created"] = dyn.create(cv, body=body).to_dict()
    # A status without the CVO's required fields is refused, as by the real CRD.
    try:
        dyn.patch(
            cv.subresources["status"],
            name="version",
            body={"status": {"capabilities": {"enabledCapabilities": ["Ingress"]}}},
            content_type="application/merge-patch+json",
        )
        out["partial_status"] = "accepted"
    except ApiException as e:
        out["partial_status"] = {"code": e.status, "causes": sorted(c["field"] for c in json.loads(e.body)["details"]["causes"])}
    out["status_patched"] = dyn.patch(
        cv.subresources["status"],
        name="version",
        # Not None: a merge patch's null deletes the key, and the required key is then missing.
        body={"status": {
            "availableUpdates": [],
            "desired": {"version": "4.18.0"},
            "observedGeneration": 1,
            "versionHash": "h",
            "capabilities": {"enabledCapabilities": ["Ingress"]},
        }},
        content_type="application/merge-patch+json",
    ).to_dict()
    out["read"] = dyn.get(cv, name="version").to_dict()
    listed = dyn.get(cv)
    out["list"] = {"kind": listed.kind, "items": [i.metadata.name for i in listed.items]}
    crd = dyn.resources.get(api_version="apiextensions.k8s.io/v1", kind="CustomResourceDefinition")
    out["crds"] = sorted(i.metadata.name for i in dyn.get(crd).items)
    infra = dyn.resources.get(api_version="config.openshift.io/v1", kind="Infrastructure")
    out["infra_namespaced"] = infra.namespaced
    slices = dyn.resources.get(api_version="discovery.k8s.io/v1", kind="EndpointSlice")
    out["slices_namespaced"] = slices.namespaced
    out["version"] = plain(client.VersionApi().get_code())
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kubeconfig", required=True)
    p.add_argument("scenario", choices=["crud", "apply", "watch", "gone", "dynamic"])
    p.add_argument("--namespace", default="default")
    p.add_argument("--name")
    p.add_argument("--resource-version")
    args = p.parse_args()
    config.load_kube_config(config_file=args.kubeconfig)
    {
        "crud": crud,
        "apply": apply,
        "watch": watch_ingress,
        "gone": gone,
        "dynamic": dynamic_client,
    }[args.scenario](args)


if __name__ == "__main__":
    try:
        main()
    except ApiException as e:
        print(f"unexpected API error {e.status}: {e.body}", file=sys.stderr)
        sys.exit(1)
