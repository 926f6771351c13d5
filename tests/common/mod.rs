//! Shared harness of the integration tests. `agent` drives the agent binary; `cloud` is the
//! one trait every cloud's peers implement ([`cloud::Cloud`]) and the harness pairing them
//! with the agent; `suite` holds the behaviour tests written once for every cloud; `aws`,
//! `gcp` and `azure` are the per-cloud harnesses (the AWS one: moto + ministack behind
//! counting proxies, inspected with boto3; the GCP and Azure ones: the fakes of
//! `bootstrap_sim`).
#![allow(dead_code, unused_imports, unused_macros)]
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod agent;
pub mod cloud;
pub mod operating;
pub mod rbac;
pub mod suite;
pub mod suite_calls;
pub mod suite_day2;
pub mod suite_permissions;
pub mod suite_publish;
pub mod suite_user_dns;

#[cfg(feature = "aws")]
pub mod aws;
#[cfg(feature = "azure")]
pub mod azure;
#[cfg(feature = "gcp")]
pub mod gcp;

pub use agent::*;
pub use cloud::{Cloud, CloudWorld, Harness, InstallerNetwork};
