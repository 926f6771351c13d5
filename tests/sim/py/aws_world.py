"""The AWS side of the local world, driven with boto3 (an independent client, so tests check
the agent's work with someone else's eyes).

  setup    create a VPC with the fixture's subnets (3 AZs) in moto and the public + private
           hosted zones in ministack, then copy the fixture asset dir to --out with the
           fixture's subnet ids replaced by the real ones (moto cannot take chosen ids).
           --layout installer: the VPC the installer makes when the install-config names no
           subnets (tagged for the cluster, with role tags), plus subnets that are not the
           cluster's. --layout flat: the fixture's subnets untagged, public ones (--public)
           routed to an internet gateway, private ones by the main route table or one
           without a way out. Every layout gets the installer's control plane in the bootstrap
           host's subnet: three instances <infra-id>-master-<i> on MASTER_IPS whose primary ENIs
           have CAPA's three security groups, only <infra-id>-lb tagged for the cluster
           (printed as "control_plane")
  inspect  print what exists: subnets, EIPs (with their association), ENIs (with their
           description) and the record sets of the world's two zones, and of every zone by id,
           as JSON
  write    set a record set to exactly the given values (another writer's action), in the
           world's --zone public|private or in --zone-id
  foreign  create resources that are NOT ours: an untagged EIP, an EIP and an ENI of another
           cluster, and an EIP tagged for our cluster by someone else (no reservation tag)
  eni      create an ENI in --subnet (one per --ip, holding it, when given), print {"id", "ids"};
           with --name, tagged Name=<name> (a user's own reservation, UPI)
  delete-eni  delete the ENI --id
  eip      allocate an untagged EIP, print {"id", "ip"}; with --name, tagged Name=<name>
  associate   associate the EIP --allocation with the ENI --eni
  subnet   create a subnet in a new VPC (not the world's), print {"id", "vpc"}; with --cidr,
           that range in a VPC of the /16 around it (the world's own range, in another VPC)
  iam-user create IAM user --name in moto with an inline policy allowing each --allow action
           (e.g. ec2:AllocateAddress) on every resource (or the policy document in the file
           --policy, as is), and an access key; print
           {"arn", "access_key_id", "secret_access_key"}
  enforce-iam  switch moto's IAM enforcement on (--value on: every later request must be
           signed with an IAM user's key and allowed by its policies) or off (--value off)
  list-records  ListResourceRecordSets of the zone --zone-id as the IAM user --key/--secret,
           through the Route53 endpoint --via (the counting proxy, which authorizes while IAM
           is enforced); print {"records": n} or {"status", "code", "message"} of the refusal
  tag-group  set the tag --name=--value on the security group --id (without --value: remove it)
  zone     create another hosted zone --name (--zone private: in the world's VPC; --tag k=v
           tags it), print {"id"}

A fixture whose install-config names `hostedZone` with a `hostedZoneRole` of account A gets
that private zone made in account A (ministack scopes Route53 by the caller's account: a
12-digit access key is that account, an AssumeRole session its role's account), and its id
replaces the fixture's in the copy. `inspect` shows A's zones under `zones_by_id` too.
"""
import argparse
import ipaddress, json, os, re, shutil, sys
import boto3

REGION = "us-east-1"
# The other account of cross-account fixtures (aws-cross-account-zone's hostedZoneRole).
OTHER_ACCOUNT = "111122223333"
# The public zone id in fixtures' DNS manifests (aws-public-ipv4-pool), replaced by the real one.
PUBLIC_ZONE_PLACEHOLDER = "Z0FIXTUREPUBLICZONE0"
AZS = ["us-east-1a", "us-east-1b", "us-east-1c"]


def clients(a):
    key, secret = getattr(a, "key", None) or "testing", getattr(a, "secret", None) or "testing"
    kw = dict(region_name=REGION, aws_access_key_id=key, aws_secret_access_key=secret)
    return boto3.client("ec2", endpoint_url=a.ec2, **kw), boto3.client("route53", endpoint_url=a.route53, **kw)


def route53_of(a, account):
    """Route53 as `account` sees it (ministack takes a 12-digit access key as the account)."""
    return boto3.client("route53", endpoint_url=a.route53, region_name=REGION,
                        aws_access_key_id=account, aws_secret_access_key="testing")


def cross_account_zone(a, cfg, vpc):
    """The install-config's hostedZone, made in its hostedZoneRole's account: {fixture id: real id}."""
    zone = re.search(r"hostedZone: (\S+)", cfg)
    role = re.search(r"hostedZoneRole: arn:aws:iam::(\d{12}):role/", cfg)
    if not (zone and role):
        return {}
    r53 = route53_of(a, role.group(1))
    real = r53.create_hosted_zone(
        Name=f"{a.cluster}.{a.base_domain}", CallerReference="cross-account",
        VPC={"VPCRegion": REGION, "VPCId": vpc}, HostedZoneConfig={"PrivateZone": True, "Comment": "shared"},
    )["HostedZone"]["Id"].split("/")[-1]
    return {zone.group(1): real}


def tag_spec(tags):
    return [{"ResourceType": "subnet", "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}]


def installer_subnets(ec2, vpc, a):
    """The installer's (CAPA's) subnets: one private and one public per AZ, tagged owned with
    their role tags; an edge subnet tagged for the cluster without role tags; another
    cluster's subnets and an untagged one. Returns (first private subnet, layout)."""
    owned = {f"kubernetes.io/cluster/{a.infra_id}": "owned"}
    layout = {"public": [], "private": [], "ignored": [], "foreign": []}
    for i, az in enumerate(AZS):
        for kind, cidr, role in (("private", f"10.0.{i + 1}.0/24", "kubernetes.io/role/internal-elb"),
                                 ("public", f"10.0.{i + 11}.0/24", "kubernetes.io/role/elb")):
            tags = dict(owned, **{role: "1", "sigs.k8s.io/cluster-api-provider-aws/role": kind,
                                  "Name": f"{a.infra_id}-subnet-{kind}-{az}"})
            sub = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=az, TagSpecifications=tag_spec(tags))
            layout[kind].append(sub["Subnet"]["SubnetId"])
    edge = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.20.0/24", AvailabilityZone=AZS[0], TagSpecifications=tag_spec(owned))
    layout["ignored"].append(edge["Subnet"]["SubnetId"])
    for cidr, tags in (("10.0.21.0/24", {"kubernetes.io/cluster/other-cluster": "owned", "kubernetes.io/role/internal-elb": "1"}),
                       ("10.0.22.0/24", {"kubernetes.io/role/elb": "1"})):
        sub = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=AZS[1], TagSpecifications=tag_spec(tags))
        layout["foreign"].append(sub["Subnet"]["SubnetId"])
    return layout["private"][0], layout


def route(ec2, vpc, mapping, public):
    """An internet gateway; the public subnets explicitly on a table routing 0.0.0.0/0 to it;
    the first private subnet on a table without a way out; the rest on the main table."""
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    public_rtb = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=public_rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    private_rtb = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    private = [real for fid, real in mapping.items() if fid not in public]
    for fid in public:
        ec2.associate_route_table(RouteTableId=public_rtb, SubnetId=mapping[fid])
    ec2.associate_route_table(RouteTableId=private_rtb, SubnetId=private[0])
    return {"internet_gateway": igw, "public_route_table": public_rtb, "private_route_table": private_rtb,
            "public": [mapping[fid] for fid in public], "private": private}


# The control-plane machines' node IPs, in the bootstrap host's subnet, above the bootstrap IPs
# the fleet tests give their agents (10.0.1.10 and up).
MASTER_IPS = ["10.0.1.240", "10.0.1.241", "10.0.1.242"]


def masters(ec2, vpc, subnet, infra_id):
    """The installer's control plane as CAPA makes it: the groups <infra>-lb, -controlplane and
    -node, each tagged with CAPA's own keys, only -lb also with kubernetes.io/cluster/<infra>
    (securitygroups.go getSecurityGroupTagParams), and one instance per MASTER_IPS named
    <infra>-master-<i> whose primary ENI has the three groups (instances.go
    GetCoreSecurityGroups). Returns {"infra_id", "ips", "instances", "groups": {role: id}}."""
    capa = "sigs.k8s.io/cluster-api-provider-aws"
    groups = {}
    for role in ("node", "lb", "controlplane"):
        tags = {"Name": f"{infra_id}-{role}", f"{capa}/cluster/{infra_id}": "owned", f"{capa}/role": role}
        if role == "lb":
            tags[f"kubernetes.io/cluster/{infra_id}"] = "owned"
        groups[role] = ec2.create_security_group(
            GroupName=f"{infra_id}-{role}", Description=f"{infra_id} {role}", VpcId=vpc,
            TagSpecifications=[{"ResourceType": "security-group",
                                "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}])["GroupId"]
    instances = []
    for i, ip in enumerate(MASTER_IPS):
        tags = {"Name": f"{infra_id}-master-{i}", f"kubernetes.io/cluster/{infra_id}": "owned",
                f"{capa}/cluster/{infra_id}": "owned", f"{capa}/role": "control-plane"}
        out = ec2.run_instances(ImageId="ami-00000000000000000", MinCount=1, MaxCount=1, InstanceType="m6i.xlarge",
                                SubnetId=subnet, PrivateIpAddress=ip, SecurityGroupIds=list(groups.values()),
                                TagSpecifications=[{"ResourceType": "instance",
                                                    "Tags": [{"Key": k, "Value": v} for k, v in tags.items()]}])
        instances.append(out["Instances"][0]["InstanceId"])
    return {"infra_id": infra_id, "ips": MASTER_IPS, "instances": instances, "groups": groups}


def tag_group(a):
    """Sets (--value) or removes (no --value) the tag --name on the security group --id."""
    ec2, _ = clients(a)
    if a.value:
        ec2.create_tags(Resources=[a.id], Tags=[{"Key": a.name, "Value": a.value[0]}])
    else:
        ec2.delete_tags(Resources=[a.id], Tags=[{"Key": a.name}])


def setup(a):
    ec2, r53 = clients(a)
    cfg = open(os.path.join(a.fixture, "manifests", "cluster-config.yaml")).read()
    fixture_ids = list(dict.fromkeys(re.findall(r"subnet-[0-9a-f]+", cfg)))
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    mapping, layout = {}, {}
    for i, fid in enumerate(fixture_ids):
        sub = ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.0.{i + 1}.0/24", AvailabilityZone=AZS[i % 3])
        mapping[fid] = sub["Subnet"]["SubnetId"]
    if a.layout == "installer":
        first, layout = installer_subnets(ec2, vpc, a)
    else:
        first = mapping[fixture_ids[0]] if fixture_ids else None
    if a.layout == "flat":
        layout = route(ec2, vpc, mapping, a.public)
    # The bootstrap host lives in the first subnet with its own private IP: moto then never
    # hands that address to an ENI of ours, as real EC2 would not.
    if first:
        ec2.create_network_interface(SubnetId=first, PrivateIpAddress=a.bootstrap_ip, Description="bootstrap host")
    infra = re.search(r"infrastructureName: (\S+)", open(os.path.join(a.fixture, "manifests",
                                                                     "cluster-infrastructure-02-config.yml")).read())
    control_plane = masters(ec2, vpc, first, infra.group(1) if infra else a.infra_id) if first else {}
    public = r53.create_hosted_zone(Name=a.base_domain, CallerReference="public")["HostedZone"]["Id"]
    private = r53.create_hosted_zone(
        Name=f"{a.cluster}.{a.base_domain}", CallerReference="private",
        VPC={"VPCRegion": REGION, "VPCId": vpc}, HostedZoneConfig={"PrivateZone": True, "Comment": "cluster"},
    )["HostedZone"]["Id"]
    # Tagged as the installer tags the private zone it makes (a DNS manifest names it so).
    r53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=private.split("/")[-1], AddTags=[
        {"Key": "Name", "Value": f"{a.infra_id}-int"},
        {"Key": f"kubernetes.io/cluster/{a.infra_id}", "Value": "owned"}])
    cross = cross_account_zone(a, cfg, vpc)
    # A fixture's DNS manifest names the public zone by a placeholder id: the real one here.
    cross[PUBLIC_ZONE_PLACEHOLDER] = public.split("/")[-1]
    if os.path.exists(a.out):
        shutil.rmtree(a.out)
    shutil.copytree(a.fixture, a.out)
    for root, _, files in os.walk(a.out):
        for f in files:
            p = os.path.join(root, f)
            text = open(p).read()
            for fid, real in list(mapping.items()) + list(cross.items()):
                text = text.replace(fid, real)
            open(p, "w").write(text)
    zones = {"public": public, "private": private}
    zones.update({"cross_account": real for fid, real in cross.items() if fid != PUBLIC_ZONE_PLACEHOLDER})
    json.dump({"vpc": vpc, "subnets": mapping, "layout": layout, "zones": zones, "control_plane": control_plane},
              sys.stdout)


def records(r53, zone_id):
    out = {}
    for page in r53.get_paginator("list_resource_record_sets").paginate(HostedZoneId=zone_id):
        for s in page["ResourceRecordSets"]:
            if s["Type"] in ("A", "AAAA"):
                out[f'{s["Name"].rstrip(".")} {s["Type"]}'] = sorted(r["Value"] for r in s.get("ResourceRecords", []))
    return out


def inspect(a):
    ec2, r53 = clients(a)
    tags = lambda ts: {t["Key"]: t["Value"] for t in ts or []}
    eips = [{"id": x["AllocationId"], "ip": x["PublicIp"], "tags": tags(x.get("Tags")),
             "eni": x.get("NetworkInterfaceId"), "association": x.get("AssociationId")}
            for x in ec2.describe_addresses()["Addresses"]]
    enis = [{"id": x["NetworkInterfaceId"], "ip": x["PrivateIpAddress"], "subnet": x["SubnetId"],
             "description": x.get("Description", ""), "tags": tags(x.get("TagSet"))}
            for x in ec2.describe_network_interfaces()["NetworkInterfaces"]]
    subnets = [{"id": s["SubnetId"], "cidr": s["CidrBlock"]} for s in ec2.describe_subnets()["Subnets"]]
    zones, by_id = {}, {}
    for z in r53.list_hosted_zones()["HostedZones"]:
        kind = "private" if z["Config"]["PrivateZone"] else "public"
        recs = records(r53, z["Id"])
        # "public"/"private": the world's zones from setup (the first of each kind).
        zones.setdefault(kind, recs)
        by_id[z["Id"].split("/")[-1]] = recs
    other = route53_of(a, OTHER_ACCOUNT)
    for z in other.list_hosted_zones()["HostedZones"]:
        by_id[z["Id"].split("/")[-1]] = records(other, z["Id"])
    json.dump({"subnets": subnets, "eips": eips, "enis": enis, "zones": zones, "zones_by_id": by_id}, sys.stdout)


def write(a):
    _, r53 = clients(a)
    zone = a.zone_id or next(z["Id"] for z in r53.list_hosted_zones()["HostedZones"] if z["Config"]["PrivateZone"] == (a.zone == "private"))
    rrset = {"Name": a.name, "Type": a.type, "TTL": 60, "ResourceRecords": [{"Value": v} for v in a.value]}
    r53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "UPSERT", "ResourceRecordSet": rrset}]})


def foreign(a):
    ec2, _ = clients(a)
    subnet = next(s["SubnetId"] for s in ec2.describe_subnets()["Subnets"] if s["CidrBlock"].startswith("10.0.1."))
    other = [{"Key": "kubernetes.io/cluster/other-cluster", "Value": "owned"},
             {"Key": "bootstrap-agent.openshift.io/reservation", "Value": f"private-ipv4@{subnet}"}]
    ec2.allocate_address(Domain="vpc")
    ec2.allocate_address(Domain="vpc", TagSpecifications=[{"ResourceType": "elastic-ip", "Tags": other}])
    ec2.allocate_address(Domain="vpc", TagSpecifications=[{"ResourceType": "elastic-ip", "Tags": [
        {"Key": f"kubernetes.io/cluster/{a.infra_id}", "Value": "owned"}]}])
    ec2.create_network_interface(SubnetId=subnet, TagSpecifications=[{"ResourceType": "network-interface", "Tags": other}])


def name_tag(kind, name):
    return {"TagSpecifications": [{"ResourceType": kind, "Tags": [{"Key": "Name", "Value": name}]}]} if name else {}


def eni(a):
    ec2, _ = clients(a)
    ids = []
    for ip in a.ip or [None]:
        kw = {"PrivateIpAddress": ip} if ip else {}
        kw.update(name_tag("network-interface", a.name))
        out = ec2.create_network_interface(SubnetId=a.subnet, Description=a.description, **kw)
        ids.append(out["NetworkInterface"]["NetworkInterfaceId"])
    json.dump({"id": ids[0], "ids": ids}, sys.stdout)


def zone(a):
    """Another hosted zone: --name, private (in the VPC of the subnets, or with --other-vpc in
    a new VPC: Route53 allows one private zone of a name per VPC) with --zone private."""
    ec2, r53 = clients(a)
    kw = {}
    if a.zone == "private":
        if a.other_vpc:
            vpc = ec2.create_vpc(CidrBlock="10.1.0.0/16")["Vpc"]["VpcId"]
        else:
            vpc = ec2.describe_subnets()["Subnets"][0]["VpcId"]
        kw = {"VPC": {"VPCRegion": REGION, "VPCId": vpc}, "HostedZoneConfig": {"PrivateZone": True, "Comment": a.name}}
    reference = f"{a.zone}-{a.name}-{os.urandom(4).hex()}"
    out = r53.create_hosted_zone(Name=a.name, CallerReference=reference, **kw)
    zone_id = out["HostedZone"]["Id"].split("/")[-1]
    if a.tag:
        tags = [{"Key": k, "Value": v} for k, v in (t.split("=", 1) for t in a.tag)]
        r53.change_tags_for_resource(ResourceType="hostedzone", ResourceId=zone_id, AddTags=tags)
    json.dump({"id": zone_id}, sys.stdout)


def delete_eni(a):
    ec2, _ = clients(a)
    ec2.delete_network_interface(NetworkInterfaceId=a.id)


def eip(a):
    ec2, _ = clients(a)
    out = ec2.allocate_address(Domain="vpc", **name_tag("elastic-ip", a.name))
    json.dump({"id": out["AllocationId"], "ip": out["PublicIp"]}, sys.stdout)


def release_eip(a):
    ec2, _ = clients(a)
    ec2.release_address(AllocationId=a.allocation)


def associate(a):
    ec2, _ = clients(a)
    ec2.associate_address(AllocationId=a.allocation, NetworkInterfaceId=a.eni)


def subnet(a):
    """A subnet in a new VPC: 10.2.1.0/24, or --cidr (its VPC then the /16 around it: shared
    accounts reuse 10.0.0.0/16 in many VPCs)."""
    ec2, _ = clients(a)
    cidr = a.cidr or "10.2.1.0/24"
    vpc_cidr = str(ipaddress.ip_network(cidr).supernet(new_prefix=16))
    vpc = ec2.create_vpc(CidrBlock=vpc_cidr)["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=AZS[0])
    json.dump({"id": sub["Subnet"]["SubnetId"], "vpc": vpc}, sys.stdout)


def iam_user(a):
    iam = boto3.client("iam", endpoint_url=a.ec2, region_name=REGION,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    arn = iam.create_user(UserName=a.name)["User"]["Arn"]
    if a.policy:
        with open(a.policy) as f:
            document = f.read()
        iam.put_user_policy(UserName=a.name, PolicyName="bootstrap-agent", PolicyDocument=document)
    elif a.allow:
        policy = {"Version": "2012-10-17",
                  "Statement": [{"Effect": "Allow", "Action": a.allow, "Resource": "*"}]}
        iam.put_user_policy(UserName=a.name, PolicyName="bootstrap-agent", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName=a.name)["AccessKey"]
    json.dump({"arn": arn, "access_key_id": key["AccessKeyId"],
               "secret_access_key": key["SecretAccessKey"]}, sys.stdout)


def list_records(a):
    from botocore.exceptions import ClientError
    r53 = boto3.client("route53", endpoint_url=a.via, region_name=REGION,
                       aws_access_key_id=a.key, aws_secret_access_key=a.secret)
    try:
        sets = r53.list_resource_record_sets(HostedZoneId=a.zone_id)["ResourceRecordSets"]
    except ClientError as e:
        json.dump({"status": e.response["ResponseMetadata"]["HTTPStatusCode"],
                   "code": e.response["Error"]["Code"], "message": e.response["Error"]["Message"]}, sys.stdout)
        return
    json.dump({"records": len(sets)}, sys.stdout)


def enforce_iam(a):
    """moto's /moto-api/reset-auth: the number of requests still let through unchecked."""
    import urllib.request
    count = {"on": b"0", "off": b"inf"}[a.value[0]]
    # Not form-encoded: moto reads the raw body.
    urllib.request.urlopen(urllib.request.Request(f"{a.ec2}/moto-api/reset-auth", data=count, method="POST",
                                                  headers={"Content-Type": "text/plain"}))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("command", choices=["setup", "inspect", "write", "foreign", "eni", "delete-eni", "eip", "associate", "zone",
                                      "subnet", "release-eip", "iam-user", "enforce-iam", "list-records", "tag-group"])
    p.add_argument("--ec2", required=True)
    p.add_argument("--route53", required=True)
    p.add_argument("--fixture")
    p.add_argument("--out")
    p.add_argument("--layout", choices=["byo", "installer", "flat"], default="byo")
    p.add_argument("--public", action="append", default=[], help="fixture ids of public subnets (--layout flat)")
    p.add_argument("--cluster", default="mycluster")
    p.add_argument("--base-domain", default="example.com")
    p.add_argument("--infra-id", default="mycluster-7xk2p")
    p.add_argument("--bootstrap-ip", default="10.0.1.10")
    p.add_argument("--policy", help="iam-user: a file holding the policy document")
    p.add_argument("--key", help="release-eip: as this IAM user's access key (with --secret)")
    p.add_argument("--secret")
    p.add_argument("--via", help="list-records: the Route53 endpoint to call")
    p.add_argument("--zone", choices=["public", "private"])
    p.add_argument("--zone-id")
    p.add_argument("--tag", action="append", default=[], help="k=v, for zone")
    p.add_argument("--other-vpc", action="store_true", help="zone --zone private: in a new VPC")
    p.add_argument("--name")
    p.add_argument("--value", action="append", default=[])
    p.add_argument("--type", default="A", help="record type, for write")
    p.add_argument("--subnet")
    p.add_argument("--cidr", help="subnet: its CIDR")
    p.add_argument("--ip", action="append")
    p.add_argument("--description", default="")
    p.add_argument("--id")
    p.add_argument("--allocation")
    p.add_argument("--eni")
    p.add_argument("--allow", action="append", default=[], help="an IAM action, for iam-user")
    a = p.parse_args()
    {"setup": setup, "inspect": inspect, "write": write, "foreign": foreign, "eni": eni,
     "delete-eni": delete_eni, "eip": eip, "associate": associate, "zone": zone,
     "release-eip": release_eip,
     "subnet": subnet, "iam-user": iam_user, "enforce-iam": enforce_iam,
     "list-records": list_records, "tag-group": tag_group}[a.command](a)


if __name__ == "__main__":
    main()
