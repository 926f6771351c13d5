//! Golden plans: one per fixture, text and JSON, from an empty cloud.

use super::*;

fn check_golden(name: &str) {
    let spec = spec(name);
    let observed = Observed::default();
    let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
    let actual = render(&plan, &observed);
    let path = manifest_path("tests/golden/plan").join(format!("{name}.txt"));
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
