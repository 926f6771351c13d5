//! What the input tests share (`bad_inputs`, `cli_input`): the binary, the asset files they
//! break, and the endpoints and kubeconfig that lead nowhere.
#![allow(dead_code)]

use std::process::{Command, Stdio};

pub const BIN: &str = env!("CARGO_BIN_EXE_bootstrap-agent");
pub const CLUSTER_CONFIG: &str = "manifests/cluster-config.yaml";
pub const CREDS: &str = "openshift/99_cloud-creds-secret.yaml";
/// In every fixture's creds secret (the AWS key id, and the secret parts), and the kubeconfig
/// token: none may ever be printed.
pub const CANARIES: [&str; 3] = [
    "fixture-secret-DO-NOT-LOG",
    "AKIAFIXTUREEXAMPLE00",
    "kube-token-DO-NOT-LOG",
];
/// A kubeconfig for a server that is not there, with a token that must never be printed.
pub const KUBECONFIG: &str = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\nusers:\n- name: u\n  user: {token: kube-token-DO-NOT-LOG}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n";
/// Nothing answers on the discard port: a stray cloud call fails fast instead of going out.
pub const NOWHERE: &str = "http://127.0.0.1:9";

/// Points every AWS endpoint the agent may call at [`NOWHERE`], with no instance metadata,
/// and pipes its output.
pub fn aws_nowhere(cmd: &mut Command) -> &mut Command {
    cmd.env("AWS_ENDPOINT_URL_EC2", NOWHERE)
        .env("AWS_ENDPOINT_URL_ROUTE_53", NOWHERE)
        .env("AWS_ENDPOINT_URL_STS", NOWHERE)
        .env("AWS_EC2_METADATA_DISABLED", "true")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
}
