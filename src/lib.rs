//! bootstrap-agent: breaks the chicken-and-egg of cluster-owned API load balancers. It reserves
//! static IPs, seeds round-robin DNS with the bootstrap host and those IPs, and later removes
//! the bootstrap host again. See the README for the stages and the resume story.

pub mod agent;
pub mod assets;
pub mod capabilities;
pub mod cli;
pub mod cluster;
pub mod daemon;
pub mod error;
pub mod journal;
pub mod plan;
pub mod providers;
pub mod render;
pub mod status;
