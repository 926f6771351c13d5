//! Azure and GCP networks: installer defaults, Shared VPC, and their refusals.

use super::*;

/// Without network fields the installer makes the network, by its default names.
#[test]
fn installer_networks_take_the_installers_default_names() {
    let azure = load_fixture("azure-default-network");
    let gcp = load_fixture("gcp-default-network");
    assert_eq!(azure_spec(&azure).base_domain_resource_group, "dns-rg");
    assert_eq!(gcp_spec(&gcp).project, "example-project");
    for (fixture, spec, table) in [
        (
            "azure-default-network",
            &azure,
            "resource group         | mycluster-7xk2p-rg            | default name (<infra-id>-rg)
             network resource group | mycluster-7xk2p-rg            | default name (the resource group)
             virtual network        | mycluster-7xk2p-vnet          | default name (<infra-id>-vnet)
             control-plane subnet   | mycluster-7xk2p-master-subnet | default name (<infra-id>-master-subnet)
             compute subnet         | mycluster-7xk2p-worker-subnet | default name (<infra-id>-worker-subnet)",
        ),
        (
            "gcp-default-network",
            &gcp,
            "network              | mycluster-7xk2p-network       | default name (<infra-id>-network)
             control-plane subnet | mycluster-7xk2p-master-subnet | default name (<infra-id>-master-subnet)
             compute subnet       | mycluster-7xk2p-worker-subnet | default name (<infra-id>-worker-subnet)",
        ),
    ] {
        assert_common_fields(spec);
        assert_network(fixture, spec, table);
    }
}

/// Where each Azure network value comes from after an edit: (case, fixture, from, to in the
/// install-config, the network values).
#[test]
fn azure_network_values_follow_the_installers_precedence() {
    let cases = [
        (
            "a named resource group is also the network resource group of the installer's vnet",
            "azure-default-network",
            "        baseDomainResourceGroupName: dns-rg\n",
            "        baseDomainResourceGroupName: dns-rg\n        resourceGroupName: my-empty-rg\n",
            "resource group         | my-empty-rg                   | install-config platform.azure.resourceGroupName
             network resource group | my-empty-rg                   | default name (the resource group)
             virtual network        | mycluster-7xk2p-vnet          | default name (<infra-id>-vnet)
             control-plane subnet   | mycluster-7xk2p-master-subnet | default name (<infra-id>-master-subnet)
             compute subnet         | mycluster-7xk2p-worker-subnet | default name (<infra-id>-worker-subnet)",
        ),
        (
            "the subnets list with roles wins over the deprecated keys it was converted from",
            "azure",
            "        computeSubnet: mycluster-worker-subnet\n",
            "        computeSubnet: mycluster-worker-subnet\n        subnets:\n        - name: cp-from-list\n          role: control-plane\n        - name: nodes-from-list\n          role: node\n        - name: more-nodes\n          role: node\n",
            "resource group         | mycluster-7xk2p-rg | install-config platform.azure.resourceGroupName
             network resource group | network-rg         | install-config platform.azure.networkResourceGroupName
             virtual network        | mycluster-vnet     | install-config platform.azure.virtualNetwork
             control-plane subnet   | cp-from-list       | install-config platform.azure.subnets[0].name
             compute subnet         | nodes-from-list    | install-config platform.azure.subnets[1].name",
        ),
    ];
    for (case, fixture, from, to, table) in cases {
        assert_network(case, &load_broken(fixture, CLUSTER_CONFIG, from, to), table);
    }
}

// ---- GCP Shared VPC ----------------------------------------------------------------------------

#[test]
fn gcp_shared_vpc_takes_the_subnetwork_from_the_host_project_and_keeps_the_service_project() {
    let spec = load_fixture("gcp-shared-vpc");
    let gcp = gcp_spec(&spec);
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.network_project.as_deref(), Some("example-host-project"));
    assert_eq!(gcp.subnetwork_project(), "example-host-project");
    assert_eq!(
        gcp.compute_subnetwork_url(),
        "projects/example-host-project/regions/us-central1/subnetworks/ocp-compute"
    );
    assert!(
        sources(&spec).contains(&(
            "network project (Shared VPC host)".into(),
            "example-host-project".into(),
            "install-config platform.gcp.networkProjectID".into()
        )),
        "{:?}",
        sources(&spec)
    );
    let plain = load_fixture("gcp");
    let gcp = gcp_spec(&plain);
    assert_eq!(gcp.network_project, None);
    assert_eq!(
        gcp.compute_subnetwork_url(),
        "projects/example-project/regions/us-central1/subnetworks/mycluster-worker-subnet"
    );
}

// ---- refusals ----------------------------------------------------------------------------------

/// Networks the installer refuses; for Shared VPC its rules for networkProjectID: a named
/// network, and credentials Manual or Passthrough.
#[test]
fn incomplete_or_contradicting_networks_are_refused() {
    assert_refusals(&[
        Refusal {
            case: "an Azure subnet with an unknown role",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "        computeSubnet: mycluster-worker-subnet\n",
            to: "        subnets:\n        - name: x\n          role: worker\n",
            field: "data.install-config: platform.azure.subnets[0].role",
            problem_has: &["expected node or control-plane"],
        },
        Refusal {
            case: "two Azure control-plane subnets",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "        computeSubnet: mycluster-worker-subnet\n",
            to: "        subnets:\n        - name: a\n          role: control-plane\n        - name: b\n          role: control-plane\n",
            field: "data.install-config: platform.azure.subnets[1].role",
            problem_has: &["a second control-plane subnet (a is the first); expected exactly one"],
        },
        Refusal {
            case: "an Azure vnet without its resource group",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "        networkResourceGroupName: network-rg\n",
            to: "",
            field: "data.install-config: platform.azure.networkResourceGroupName",
            problem_has: &["missing; expected the resource group of virtualNetwork mycluster-vnet"],
        },
        Refusal {
            case: "an Azure vnet without a compute subnet",
            fixture: "azure",
            file: CLUSTER_CONFIG,
            from: "        computeSubnet: mycluster-worker-subnet\n",
            to: "",
            field: "data.install-config: platform.azure.computeSubnet",
            problem_has: &[
                "missing; with virtualNetwork mycluster-vnet expected a subnet with role node",
            ],
        },
        Refusal {
            case: "an Azure subnet without a vnet",
            fixture: "azure-default-network",
            file: CLUSTER_CONFIG,
            from: "        baseDomainResourceGroupName: dns-rg\n",
            to: "        baseDomainResourceGroupName: dns-rg\n        computeSubnet: my-subnet\n",
            field: "data.install-config: platform.azure.computeSubnet",
            problem_has: &[
                "set without platform.azure.virtualNetwork",
                "mycluster-7xk2p-vnet",
            ],
        },
        Refusal {
            case: "a GCP network without its subnets",
            fixture: "gcp",
            file: CLUSTER_CONFIG,
            from: "        controlPlaneSubnet: mycluster-master-subnet\n",
            to: "",
            field: "data.install-config: platform.gcp.controlPlaneSubnet",
            problem_has: &["missing; expected the name of a subnet of network mycluster-network"],
        },
        Refusal {
            case: "a GCP subnet without a network",
            fixture: "gcp-default-network",
            file: CLUSTER_CONFIG,
            from: "        region: us-central1\n",
            to: "        region: us-central1\n        computeSubnet: my-subnet\n",
            field: "data.install-config: platform.gcp.computeSubnet",
            problem_has: &["set without platform.gcp.network"],
        },
        Refusal {
            case: "a Shared VPC without its network",
            fixture: "gcp-shared-vpc",
            file: CLUSTER_CONFIG,
            from: "        network: shared-vpc\n",
            to: "",
            field: "data.install-config: platform.gcp.network",
            problem_has: &[
                "missing; networkProjectID example-host-project (Shared VPC) needs the name of the network it shares",
            ],
        },
        Refusal {
            case: "a Shared VPC with Mint credentials",
            fixture: "gcp-shared-vpc",
            file: CLUSTER_CONFIG,
            from: "    credentialsMode: Passthrough\n",
            to: "    credentialsMode: Mint\n",
            field: "data.install-config: credentialsMode",
            problem_has: &[
                "is \"Mint\"; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough",
            ],
        },
        Refusal {
            case: "a Shared VPC without a credentials mode",
            fixture: "gcp-shared-vpc",
            file: CLUSTER_CONFIG,
            from: "    credentialsMode: Passthrough\n",
            to: "",
            field: "data.install-config: credentialsMode",
            problem_has: &[
                "missing; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough",
            ],
        },
    ]);
}
