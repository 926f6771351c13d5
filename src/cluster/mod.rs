//! The Kubernetes side: a client from a kubeconfig, server-side apply of the rendered
//! manifests, and the readiness gate that watches Services and their EndpointSlices.

pub mod apply;
pub mod gate;
pub mod lb_controller;
pub mod wire;

use anyhow::{Context, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use std::path::Path;

/// The field manager of everything the agent applies.
pub const FIELD_MANAGER: &str = "bootstrap-agent";

/// Reads a kubeconfig. A parse error is reported without the parser's text: it quotes the
/// source around the error, and a kubeconfig holds tokens and keys.
pub fn read_kubeconfig(path: &Path) -> Result<Kubeconfig, crate::error::InputError> {
    use kube::config::KubeconfigError;
    Kubeconfig::read_from(path).map_err(|e| {
        let problem = match e {
            KubeconfigError::ReadConfig(io, _) => format!("cannot read: {io}"),
            KubeconfigError::Parse(_) => {
                "not a valid kubeconfig (YAML parse error; details withheld because the file holds credentials)".to_string()
            }
            other => format!("not a usable kubeconfig: {other}"),
        };
        crate::error::InputError::new(path, "--kubeconfig", problem)
    })
}

/// `bootstrap-agent/<version>`: sent on every request, so audit logs name the agent.
pub const USER_AGENT: &str = concat!("bootstrap-agent/", env!("CARGO_PKG_VERSION"));

/// A client for the cluster in `kubeconfig`.
pub async fn client(kubeconfig: &Path) -> Result<kube::Client> {
    let kc = read_kubeconfig(kubeconfig)?;
    let mut config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("kubeconfig {} is not usable", kubeconfig.display()))?;
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static(USER_AGENT),
    ));
    kube::Client::try_from(config).context("cannot build the Kubernetes client")
}

/// Publishes where the agent is as ConfigMap `kube-system/bootstrap-agent`, where the
/// installer (and a person with `oc`) can read it: `phase` (`gate-passed`, then `complete`),
/// `passed` and the whole signal as `signal.json`. Skipped when it already says the same.
pub async fn publish_signal(
    client: &kube::Client,
    phase: &str,
    signal: &serde_json::Value,
) -> Result<()> {
    let data = std::collections::BTreeMap::from([
        ("phase".to_string(), phase.to_string()),
        // Every phase comes after the gate passed.
        ("passed".to_string(), "true".to_string()),
        (
            "signal.json".to_string(),
            serde_json::to_string_pretty(signal)?,
        ),
    ]);
    apply_signal_keys(client, FIELD_MANAGER, data, &["phase"])
        .await
        .with_context(|| {
            format!("cannot publish phase {phase} to ConfigMap kube-system/bootstrap-agent")
        })
}

/// Server-side applies `data` into ConfigMap `kube-system/bootstrap-agent` as `manager`
/// (each manager owns its keys; neither apply removes the other's), unless the keys `same`
/// already hold their values.
pub(crate) async fn apply_signal_keys(
    client: &kube::Client,
    manager: &str,
    data: std::collections::BTreeMap<String, String>,
    same: &[&str],
) -> Result<()> {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Patch, PatchParams};
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-system");
    if let Some(live) = api.get_opt("bootstrap-agent").await?
        && let Some(have) = live.data.as_ref()
        && same.iter().all(|k| have.get(*k) == data.get(*k))
    {
        return Ok(());
    }
    let cm = ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some("bootstrap-agent".into()),
            namespace: Some("kube-system".into()),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    };
    api.patch(
        "bootstrap-agent",
        &PatchParams::apply(manager).force(),
        &Patch::Apply(&cm),
    )
    .await?;
    Ok(())
}

/// A watch the API server refused (403 Forbidden): kube-runtime re-lists with backoff, but a
/// refusal of authorization does not heal by retrying, so the waits stop with it; its message
/// is kube-apiserver's, naming the user, verb, resource and API group that are missing.
#[derive(Debug, thiserror::Error)]
#[error("the API server refused a watch the agent needs: {0}")]
pub struct WatchRefused(pub String);

impl WatchRefused {
    /// PURE: Some when `e` is the API server's 403.
    pub fn of(e: &kube::runtime::watcher::Error) -> Option<Self> {
        use kube::runtime::watcher::Error as W;
        let status = match e {
            W::InitialListFailed(kube::Error::Api(s))
            | W::WatchStartFailed(kube::Error::Api(s))
            | W::WatchFailed(kube::Error::Api(s))
            | W::WatchError(s) => s,
            _ => return None,
        };
        (status.code == 403).then(|| Self(status.message.clone()))
    }
}

/// A reflector's store and its stream, each item saying whether the store now holds the whole
/// initial list (`InitDone`): before that an empty store means "not listed yet", not "absent".
pub(crate) fn watch<K>(
    api: kube::Api<K>,
    config: kube::runtime::watcher::Config,
) -> (
    kube::runtime::reflector::Store<K>,
    futures::stream::BoxStream<'static, Result<bool, kube::runtime::watcher::Error>>,
)
where
    K: kube::Resource<DynamicType = ()>
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    use futures::StreamExt;
    use kube::runtime::{WatchStreamExt, reflector, watcher};
    let (reader, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher::watcher(api, config))
        .default_backoff()
        .map(|event| event.map(|e| matches!(e, watcher::Event::InitDone)))
        .boxed();
    (reader, stream)
}

/// The field manager of the scope change's keys in ConfigMap `kube-system/bootstrap-agent`:
/// not `run`'s, so that neither apply removes the other's keys.
pub const SCOPE_FIELD_MANAGER: &str = "bootstrap-agent-publish";

/// `publish --scope`: the API's scope (`apiScope`) and the change's condition
/// (`conditions.json`, one `Progressing` condition) into ConfigMap `kube-system/bootstrap-agent`,
/// beside the phase `run` wrote there.
pub async fn publish_scope(
    client: &kube::Client,
    scope: &str,
    conditions: &serde_json::Value,
) -> Result<()> {
    let data = std::collections::BTreeMap::from([
        ("apiScope".to_string(), scope.to_string()),
        (
            "conditions.json".to_string(),
            serde_json::to_string_pretty(conditions)?,
        ),
    ]);
    apply_signal_keys(
        client,
        SCOPE_FIELD_MANAGER,
        data,
        &["apiScope", "conditions.json"],
    )
    .await
    .with_context(|| {
        format!("cannot publish the API scope {scope} to ConfigMap kube-system/bootstrap-agent")
    })
}
