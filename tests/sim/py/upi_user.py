"""The user of a UPI install, with the official clients: creates the load balancers' addresses
by the seed's names before the agent runs, as docs/upi.md ("UPI, by hand") says, and prints
what the cloud made of them as JSON.

  gcp-address  --endpoint E --project P --region R --name N --type EXTERNAL|INTERNAL
               [--purpose SHARED_LOADBALANCER_VIP] [--subnetwork projects/P/regions/R/subnetworks/S]
               (google-api-python-client, anonymous, against the fake's REST API)
  azure-pip    --arm A --token T --subscription S --rg RG --name N --location L
               [--sku Standard] [--allocation Static] [--version IPv4]
               (azure-mgmt-network against the fake's ARM API)
"""
import argparse, json, sys, time


def gcp_address(a):
    from google.auth.credentials import AnonymousCredentials
    from googleapiclient.discovery import build
    compute = build("compute", "v1", static_discovery=True, credentials=AnonymousCredentials(),
                    client_options={"api_endpoint": a.endpoint + "/compute/v1/"})
    body = {"name": a.name, "addressType": a.type}
    if a.purpose:
        body["purpose"] = a.purpose
    if a.subnetwork:
        body["subnetwork"] = a.subnetwork
    op = compute.addresses().insert(project=a.project, region=a.region, body=body).execute()
    while op["status"] != "DONE":
        time.sleep(0.05)
        op = compute.regionOperations().get(project=a.project, region=a.region, operation=op["name"]).execute()
    if op.get("error"):
        sys.exit(f"insert failed: {op['error']}")
    got = compute.addresses().get(project=a.project, region=a.region, address=a.name).execute()
    json.dump({"name": got["name"], "ip": got["address"]}, sys.stdout)


def azure_pip(a):
    from azure.core.credentials import AccessToken
    from azure.core.pipeline.policies import SansIOHTTPPolicy
    from azure.mgmt.network import NetworkManagementClient
    from azure.mgmt.network.models import PublicIPAddress, PublicIPAddressSku

    class Cred:
        def get_token(self, *scopes, **kwargs):
            return AccessToken(a.token, int(time.time()) + 3600)

    class Bearer(SansIOHTTPPolicy):
        def on_request(self, request):
            request.http_request.headers["Authorization"] = "Bearer " + a.token

    net = NetworkManagementClient(Cred(), a.subscription, base_url=a.arm, authentication_policy=Bearer())
    body = PublicIPAddress(location=a.location, sku=PublicIPAddressSku(name=a.sku),
                           public_ip_allocation_method=a.allocation, public_ip_address_version=a.version)
    pip = net.public_ip_addresses.begin_create_or_update(a.rg, a.name, body, polling_interval=0.05).result()
    pip = net.public_ip_addresses.get(a.rg, a.name)
    json.dump({"name": pip.name, "id": pip.id, "ip": pip.ip_address}, sys.stdout)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["gcp-address", "azure-pip"])
    p.add_argument("--endpoint")
    p.add_argument("--project")
    p.add_argument("--region")
    p.add_argument("--name", required=True)
    p.add_argument("--type", default="EXTERNAL")
    p.add_argument("--purpose")
    p.add_argument("--subnetwork")
    p.add_argument("--arm")
    p.add_argument("--token")
    p.add_argument("--subscription")
    p.add_argument("--rg")
    p.add_argument("--location")
    p.add_argument("--sku", default="Standard")
    p.add_argument("--allocation", default="Static")
    p.add_argument("--version", default="IPv4")
    a = p.parse_args()
    {"gcp-address": gcp_address, "azure-pip": azure_pip}[a.command](a)


if __name__ == "__main__":
    main()
