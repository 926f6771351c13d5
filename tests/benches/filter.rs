//! `cargo bench --bench filter` (or `--profile dev`): the capability filter on a generated
//! payload of 1,000 manifests (tests/payload). Target: the decision pass <= 30 ms. Numbers,
//! not asserts: read them.

#[path = "../payload/mod.rs"]
mod payload;
#[path = "report.rs"]
mod report;

use bootstrap_agent::capabilities::{
    self,
    inclusion::Annotations,
    manifests,
    registry::Registry,
    selection::{GateInputs, Gates},
};
use std::path::Path;
use std::time::{Duration, Instant};

/// This bench's report line: names up to 52 wide.
fn report(name: &str, samples: Vec<Duration>) {
    report::report(name, samples, 52, 4);
}

fn time<T>(n: usize, mut f: impl FnMut() -> T) -> Vec<Duration> {
    (0..n)
        .map(|_| {
            let start = Instant::now();
            std::hint::black_box(f());
            start.elapsed()
        })
        .collect()
}

fn main() {
    let registry = Registry::load(None).unwrap_or_else(|e| panic!("{e}"));
    let gates = Gates::resolve(&GateInputs::default()).unwrap_or_else(|e| panic!("{e}"));
    let sel = capabilities::selection_from_flags(&registry, &gates, Some("v4.14"), &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let ctx = capabilities::context(
        &sel,
        &gates,
        capabilities::inclusion::DEFAULT_PROFILE,
        &["internal-openshift-hosted".to_string()],
    );
    let files: Vec<manifests::ManifestFile> = payload::generate(1000, 42)
        .into_iter()
        .map(|(name, text)| manifests::ManifestFile { name, text })
        .collect();
    let bytes: usize = files.iter().map(|f| f.text.len()).sum();
    let payload = manifests::from_files(Path::new("payload"), files.clone());
    assert!(payload.unreadable.is_empty(), "{:?}", payload.unreadable);
    let (i, d, e) = capabilities::counts(&capabilities::decide_all(&payload, &ctx));
    println!(
        "payload: {} objects in {} files, {} KiB; {i} included, {d} to delete, {e} excluded",
        payload.manifests.len(),
        payload.files.len(),
        bytes / 1024
    );

    report(
        "decision pass (1,000 objects, annotations parsed)",
        time(200, || capabilities::decide_all(&payload, &ctx)),
    );
    report(
        "annotation parsing + decision pass",
        time(200, || {
            payload
                .manifests
                .iter()
                .map(|m| {
                    Annotations::parse(&m.raw_annotations)
                        .map(|a| capabilities::inclusion::decide(&a, &ctx))
                })
                .collect::<Vec<_>>()
        }),
    );
    report(
        "split + YAML parse + decide (whole filter, in memory)",
        time(20, || {
            let p = manifests::from_files(Path::new("payload"), files.clone());
            capabilities::decide_all(&p, &ctx)
        }),
    );
}
