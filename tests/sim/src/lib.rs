//! Local peers for the tests and the README demo: the real third-party emulators (moto for EC2,
//! ministack for Route53) in a venv under target/, started on free loopback ports, and a
//! counting, fault-injecting HTTP proxy in front of them.

pub mod args;
pub mod aws;
pub mod azure;
pub mod baddays;
pub mod emulator;
pub mod fleet;
pub mod gcp;
pub mod handover;
pub mod kube;
pub mod limits;
pub mod nodes;
pub mod peers;
pub mod percent;
pub mod pki;
pub mod proxy;
pub mod real_ccm;
pub mod rng;
pub mod upi;
pub mod venv;

/// `--output text|json`, as every report subcommand takes it.
pub use args::output_arg;
pub use aws::{AwsPeers, ControlPlane, IamUser, VpcLayout};
pub use limits::{Limits, QuotaUse};
pub use proxy::{Fault, FaultStats, Faults, Hold, Latency, Proxy, RateLimit, Service};
