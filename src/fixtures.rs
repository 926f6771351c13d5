//! The asset directories of the unit tests (`tests/fixtures/assets/<name>`), loaded.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::assets::ClusterSpec;
use std::path::Path;

/// The fixture `name`, loaded as `bootstrap-agent` loads an asset dir.
pub fn spec(name: &str) -> ClusterSpec {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/assets")
        .join(name);
    crate::assets::load(&dir).unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// The AWS fixture with `bootstrap_ip` (None: without one).
pub fn aws_with_bootstrap_ip(bootstrap_ip: Option<&str>) -> ClusterSpec {
    let mut spec = spec("aws");
    spec.bootstrap_ip = bootstrap_ip.map(|s| s.parse().unwrap());
    spec
}
