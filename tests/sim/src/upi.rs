//! The user of a UPI install: creates the load balancers' addresses by the seed's names with
//! the official GCP and Azure clients (`py/upi_user.py`), through the fakes' REST APIs and not
//! through the counting proxies, which count only the agent. On AWS, boto3 does it
//! ([`crate::AwsPeers::create_named`]).

use crate::venv;
use anyhow::Result;
use serde_json::Value;

/// A GCP regional address made by the user: `internal` = INTERNAL with `purpose` in
/// `subnetwork` (a URL path); else EXTERNAL. Its name and IP.
pub async fn gcp_address(
    fake: &crate::gcp::GcpFake,
    name: &str,
    internal: Option<(&str, &str)>,
) -> Result<Value> {
    let seed = fake.seed();
    let mut args = vec![
        "gcp-address".to_string(),
        "--endpoint".into(),
        fake.url(),
        "--project".into(),
        seed.project.clone(),
        "--region".into(),
        seed.region.clone(),
        "--name".into(),
        name.into(),
    ];
    match internal {
        Some((purpose, subnetwork)) => args.extend([
            "--type".into(),
            "INTERNAL".into(),
            "--purpose".into(),
            purpose.into(),
            "--subnetwork".into(),
            subnetwork.into(),
        ]),
        None => args.extend(["--type".into(), "EXTERNAL".into()]),
    }
    run(&args).await
}

/// An Azure public IP made by the user in `rg`: `sku`, `allocation`, `location` as given.
pub async fn azure_public_ip(
    sim: &crate::azure::AzureSim,
    rg: &str,
    name: &str,
    location: &str,
    sku: &str,
    allocation: &str,
) -> Result<Value> {
    let args: Vec<String> = [
        "azure-pip",
        "--arm",
        &sim.arm_url(),
        "--token",
        &sim.issue_token(),
        "--subscription",
        crate::azure::SUBSCRIPTION,
        "--rg",
        rg,
        "--name",
        name,
        "--location",
        location,
        "--sku",
        sku,
        "--allocation",
        allocation,
    ]
    .into_iter()
    .map(str::to_string)
    .collect();
    run(&args).await
}

async fn run(args: &[String]) -> Result<Value> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    venv::run_json("upi_user.py", &args).await
}
