//! Golden plans: one per fixture, text and JSON, from an empty cloud.

use super::*;

fn check_golden(name: &str) {
    check_golden_observed(name, name, &Observed::default());
}

/// The plan of fixture `name` against `observed`, compared with `golden`.txt.
fn check_golden_observed(name: &str, golden: &str, observed: &Observed) {
    let spec = spec(name);
    let plan = Plan::calculate(&spec, observed, &STAGE1, 1);
    let actual = render(&plan, observed);
    let path = manifest_path("tests/golden/plan").join(format!("{golden}.txt"));
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "plan for fixture {name} differs from {} (if the change is intended, re-run with UPDATE_GOLDEN=1 and review the diff)",
        path.display()
    );
}

#[test]
fn golden_plan_aws() {
    check_golden("aws");
}

/// credentialsMode: Manual, as the installer leaves it: no creds secret in the asset dir.
#[test]
fn golden_plan_aws_manual_creds() {
    check_golden("aws-manual-creds");
}

#[test]
fn golden_plan_aws_internal() {
    check_golden("aws-internal");
}

#[test]
fn golden_plan_aws_dualstack() {
    check_golden("aws-dualstack");
}

#[test]
fn golden_plan_aws_installer_vpc() {
    check_golden("aws-installer-vpc");
}

#[test]
fn golden_plan_aws_flat_subnets() {
    check_golden("aws-flat-subnets");
}

#[test]
fn golden_plan_aws_user_dns() {
    check_golden("aws-user-dns");
}

#[test]
fn golden_plan_azure_default_network() {
    check_golden("azure-default-network");
}

#[test]
fn golden_plan_gcp_default_network() {
    check_golden("gcp-default-network");
}

#[test]
fn golden_plan_azure() {
    check_golden("azure");
}

#[test]
fn golden_plan_azure_dualstack() {
    check_golden("azure-dualstack");
}

#[test]
fn golden_plan_azure_mixed_api_external() {
    check_golden("azure-mixed-api-external");
}

#[test]
fn golden_plan_azure_mixed_api_internal() {
    check_golden("azure-mixed-api-internal");
}

#[test]
fn golden_plan_gcp() {
    check_golden("gcp");
}

#[test]
fn golden_plan_gcp_dualstack() {
    check_golden("gcp-dualstack");
}

#[test]
fn golden_plan_gcp_shared_vpc() {
    check_golden("gcp-shared-vpc");
}

#[test]
fn golden_plan_aws_public_ipv4_pool() {
    check_golden("aws-public-ipv4-pool");
}

/// Online, `plan` shows the pool's free addresses against the three EIPs it needs.
#[test]
fn golden_plan_aws_public_ipv4_pool_with_room() {
    check_golden_observed(
        "aws-public-ipv4-pool",
        "aws-public-ipv4-pool-observed",
        &pool_observed(16),
    );
}

/// Two free addresses for three EIPs: flagged, with how many to add.
#[test]
fn golden_plan_aws_public_ipv4_pool_too_small() {
    check_golden_observed(
        "aws-public-ipv4-pool",
        "aws-public-ipv4-pool-too-small",
        &pool_observed(2),
    );
}

fn pool_observed(free: u32) -> Observed {
    Observed {
        address_pool: Some(bootstrap_cloud::AddressPool {
            id: "ipv4pool-ec2-0123456789abcdef0".into(),
            total: 16,
            free,
        }),
        ..Default::default()
    }
}

#[test]
fn golden_plan_aws_cross_account_zone() {
    check_golden("aws-cross-account-zone");
}

#[test]
fn golden_plan_gcp_private_zone_project() {
    check_golden("gcp-private-zone-project");
}

#[test]
fn golden_plan_none() {
    check_golden("none");
}

#[test]
fn golden_json_round_trips() {
    for name in &fixtures() {
        let plan = Plan::calculate(&spec(name), &Observed::default(), &STAGE1, 1);
        let json = serde_json::to_string(&plan).unwrap();
        let back: Plan = serde_json::from_str(&json).unwrap();
        assert_eq!(back, plan, "{name}");
    }
}

/// AzureUSGovernmentCloud: the same resources and records as public Azure.
#[test]
fn golden_plan_azure_usgov() {
    check_golden("azure-usgov");
}

/// An existing vnet in `networkResourceGroupName`, subnets with roles.
#[test]
fn golden_plan_azure_vnet_other_rg() {
    check_golden("azure-vnet-other-rg");
}

/// Azure Stack Hub: no private zone, `api-int` in the base-domain zone next to the public `api`.
#[test]
fn golden_plan_azure_stack() {
    check_golden("azure-stack");
}
