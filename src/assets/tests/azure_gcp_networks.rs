//! Azure and GCP networks: installer defaults, Shared VPC, and their refusals.

use super::*;

#[test]
fn azure_installer_network_takes_the_installers_default_names() {
    let spec = load_fixture("azure-default-network");
    assert_common_fields(&spec);
    let azure = azure_spec(&spec);
    assert_eq!(azure.resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.network_resource_group, "mycluster-7xk2p-rg");
    assert_eq!(azure.virtual_network, "mycluster-7xk2p-vnet");
    assert_eq!(azure.control_plane_subnet, "mycluster-7xk2p-master-subnet");
    assert_eq!(azure.compute_subnet, "mycluster-7xk2p-worker-subnet");
    assert_eq!(azure.base_domain_resource_group, "dns-rg");
    assert_sources(
        &spec,
        "resource group         | mycluster-7xk2p-rg            | default name (<infra-id>-rg)
         network resource group | mycluster-7xk2p-rg            | default name (the resource group)
         virtual network        | mycluster-7xk2p-vnet          | default name (<infra-id>-vnet)
         control-plane subnet   | mycluster-7xk2p-master-subnet | default name (<infra-id>-master-subnet)
         compute subnet         | mycluster-7xk2p-worker-subnet | default name (<infra-id>-worker-subnet)",
    );
}

#[test]
fn azure_named_resource_group_is_also_the_network_resource_group_of_the_installers_vnet() {
    let dir = broken(
        "azure-default-network",
        CLUSTER_CONFIG,
        "        baseDomainResourceGroupName: dns-rg\n",
        "        baseDomainResourceGroupName: dns-rg\n        resourceGroupName: my-empty-rg\n",
    );
    let spec = load(dir.path()).unwrap();
    let azure = azure_spec(&spec);
    assert_eq!(azure.resource_group, "my-empty-rg");
    assert_eq!(azure.network_resource_group, "my-empty-rg");
    assert_eq!(azure.virtual_network, "mycluster-7xk2p-vnet");
}

#[test]
fn azure_subnets_list_with_roles_wins_over_the_deprecated_keys_it_was_converted_from() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        computeSubnet: mycluster-worker-subnet\n        subnets:\n        - name: cp-from-list\n          role: control-plane\n        - name: nodes-from-list\n          role: node\n        - name: more-nodes\n          role: node\n",
    );
    let spec = load(dir.path()).unwrap();
    let azure = azure_spec(&spec);
    assert_eq!(azure.control_plane_subnet, "cp-from-list");
    assert_eq!(azure.compute_subnet, "nodes-from-list");
    let sources = sources(&spec);
    assert_eq!(
        sources[3].2,
        "install-config platform.azure.subnets[0].name"
    );
    assert_eq!(
        sources[4].2,
        "install-config platform.azure.subnets[1].name"
    );
}

#[test]
fn azure_subnet_with_an_unknown_role_names_the_role() {
    refused(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        subnets:\n        - name: x\n          role: worker\n",
        "data.install-config: platform.azure.subnets[0].role",
        "expected node or control-plane",
    );
}

#[test]
fn azure_two_control_plane_subnets_are_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "        subnets:\n        - name: a\n          role: control-plane\n        - name: b\n          role: control-plane\n",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.subnets[1].role",
        "a second control-plane subnet (a is the first); expected exactly one",
    );
}

#[test]
fn azure_vnet_without_its_resource_group_is_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        networkResourceGroupName: network-rg\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.networkResourceGroupName",
        "missing; expected the resource group of virtualNetwork mycluster-vnet",
    );
}

#[test]
fn azure_vnet_without_a_compute_subnet_is_rejected() {
    let dir = broken(
        "azure",
        CLUSTER_CONFIG,
        "        computeSubnet: mycluster-worker-subnet\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.azure.computeSubnet",
        "missing; with virtualNetwork mycluster-vnet expected a subnet with role node",
    );
}

#[test]
fn azure_subnet_without_a_vnet_is_rejected() {
    let err = refused(
        "azure-default-network",
        CLUSTER_CONFIG,
        "        baseDomainResourceGroupName: dns-rg\n",
        "        baseDomainResourceGroupName: dns-rg\n        computeSubnet: my-subnet\n",
        "data.install-config: platform.azure.computeSubnet",
        "set without platform.azure.virtualNetwork",
    );
    assert!(err.problem.contains("mycluster-7xk2p-vnet"), "{err}");
}

#[test]
fn gcp_installer_network_takes_the_installers_default_names() {
    let spec = load_fixture("gcp-default-network");
    assert_common_fields(&spec);
    let gcp = gcp_spec(&spec);
    assert_eq!(gcp.project, "example-project");
    assert_eq!(gcp.network, "mycluster-7xk2p-network");
    assert_eq!(gcp.control_plane_subnet, "mycluster-7xk2p-master-subnet");
    assert_eq!(gcp.compute_subnet, "mycluster-7xk2p-worker-subnet");
    assert_sources(
        &spec,
        "network              | mycluster-7xk2p-network       | default name (<infra-id>-network)
         control-plane subnet | mycluster-7xk2p-master-subnet | default name (<infra-id>-master-subnet)
         compute subnet       | mycluster-7xk2p-worker-subnet | default name (<infra-id>-worker-subnet)",
    );
}

#[test]
fn gcp_network_without_its_subnets_is_rejected() {
    let dir = broken(
        "gcp",
        CLUSTER_CONFIG,
        "        controlPlaneSubnet: mycluster-master-subnet\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.controlPlaneSubnet",
        "missing; expected the name of a subnet of network mycluster-network",
    );
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

/// The installer's rules for networkProjectID: a named network, and credentials Manual or
/// Passthrough.
#[test]
fn gcp_shared_vpc_without_its_network_or_with_mint_credentials_is_rejected() {
    let dir = broken(
        "gcp-shared-vpc",
        CLUSTER_CONFIG,
        "        network: shared-vpc\n",
        "",
    );
    let err = load_err(dir.path(), CLUSTER_CONFIG);
    assert_problem(
        &err,
        "data.install-config: platform.gcp.network",
        "missing; networkProjectID example-host-project (Shared VPC) needs the name of the network it shares",
    );
    for (to, found) in [
        ("    credentialsMode: Mint\n", "is \"Mint\""),
        ("", "missing"),
    ] {
        let dir = broken(
            "gcp-shared-vpc",
            CLUSTER_CONFIG,
            "    credentialsMode: Passthrough\n",
            to,
        );
        let err = load_err(dir.path(), CLUSTER_CONFIG);
        assert_problem(
            &err,
            "data.install-config: credentialsMode",
            &format!(
                "{found}; platform.gcp.networkProjectID (Shared VPC) needs Manual or Passthrough"
            ),
        );
    }
}

#[test]
fn gcp_subnet_without_a_network_is_rejected() {
    refused(
        "gcp-default-network",
        CLUSTER_CONFIG,
        "        region: us-central1\n",
        "        region: us-central1\n        computeSubnet: my-subnet\n",
        "data.install-config: platform.gcp.computeSubnet",
        "set without platform.gcp.network",
    );
}
