//! The GCE metadata server of the VM a cloud-controller-manager runs on, served on the fake's
//! loopback port so that a real controller started with `GCE_METADATA_HOST=127.0.0.1:PORT`
//! reads its zone, project, network and token here and never probes 169.254.169.254.
//!
//! What the clients read (openshift/cloud-provider-gcp 30cc0479; the research note
//! `real-ccms-gcp-azure.md` 1.1-1.2 lists them with file:line): every read is
//! `GET http://$GCE_METADATA_HOST/computeMetadata/v1/<path>` with the header
//! `Metadata-Flavor: Google` (`vendor/cloud.google.com/go/compute/metadata/metadata.go`), and
//! the server refuses a request without it (403), as GCE's does. Values are plain text:
//! `instance/zone` is `projects/<number>/zones/<zone>` (four `/`-parts, the provider splits it),
//! `instance/network-interfaces/0/network` is `projects/<number>/networks/<name>`. The token
//! (`instance/service-accounts/default/token`) is JSON `{access_token, expires_in, token_type}`
//! (`vendor/golang.org/x/oauth2/google/google.go`); the fake accepts any token, so it is a
//! random one, never a credential.

use super::World;
use serde_json::json;

/// The VM the controller runs on: the seed's first control-plane machine.
fn this_vm(w: &World) -> Option<&super::InstanceSeed> {
    let master = format!("{}-master-", w.seed().infra_id);
    w.seed()
        .instances
        .iter()
        .find(|i| i.name.starts_with(&master))
}

/// The project's number, as metadata names projects.
pub(crate) fn project_number(w: &World) -> String {
    let id = super::reads::stable_id(&w.seed().project);
    id.chars().take(12).collect()
}

/// The answer to `GET /computeMetadata/v1/<path>`: (status, content type, body).
pub(crate) fn answer(w: &World, path: &str, flavor: Option<&str>) -> (u16, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    if flavor != Some("Google") {
        return (403, TEXT, "Missing Metadata-Flavor:Google header.".into());
    }
    let seed = w.seed();
    let number = project_number(w);
    let vm = this_vm(w);
    let zone = vm.map_or_else(
        || super::region_zones(&seed.region).remove(0),
        |v| v.zone.clone(),
    );
    let name = vm.map_or_else(|| "ccm".to_string(), |v| v.name.clone());
    let text = |s: String| (200, TEXT, s);
    match path.trim_end_matches('/') {
        "project/project-id" => text(seed.project.clone()),
        "project/numeric-project-id" => text(number),
        "instance/zone" => text(format!("projects/{number}/zones/{zone}")),
        "instance/name" => text(name),
        "instance/hostname" => text(format!("{name}.{zone}.c.{}.internal", seed.project)),
        "instance/id" => text(super::reads::stable_id(&name)),
        "instance/network-interfaces/0/network" => {
            text(format!("projects/{number}/networks/{}", seed.network))
        }
        "universe/universe-domain" => text("googleapis.com".into()),
        "instance/service-accounts/default/token" => (
            200,
            "application/json",
            json!({
                "access_token": format!("fake-{}", uuid::Uuid::new_v4().simple()),
                "expires_in": 3599,
                "token_type": "Bearer",
            })
            .to_string(),
        ),
        "instance/service-accounts/default/email" => text(format!(
            "{}-ccm@{}.iam.gserviceaccount.com",
            seed.infra_id, seed.project
        )),
        "instance/service-accounts/default/scopes" => {
            text("https://www.googleapis.com/auth/cloud-platform".into())
        }
        _ => (404, TEXT, "Not Found".into()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::super::{FakeOptions, World};
    use super::answer;

    #[test]
    fn metadata_answers_only_with_the_flavor_header_and_in_the_shapes_the_provider_splits() {
        let w = World::new(FakeOptions::realistic());
        assert_eq!(answer(&w, "instance/zone", None).0, 403);
        let (status, _, zone) = answer(&w, "instance/zone", Some("Google"));
        assert_eq!(status, 200);
        let parts: Vec<&str> = zone.split('/').collect();
        assert_eq!(parts.len(), 4, "{zone}");
        assert_eq!(
            (parts[0], parts[2], parts[3]),
            ("projects", "zones", "us-central1-a")
        );
        let (_, _, network) = answer(&w, "instance/network-interfaces/0/network", Some("Google"));
        assert!(
            network.ends_with("/networks/mycluster-network"),
            "{network}"
        );
        let (_, kind, token) = answer(
            &w,
            "instance/service-accounts/default/token",
            Some("Google"),
        );
        assert_eq!(kind, "application/json");
        let token: serde_json::Value = serde_json::from_str(&token).unwrap();
        assert!(token["expires_in"].as_u64().unwrap() > 0);
        assert_eq!(answer(&w, "instance/nothing", Some("Google")).0, 404);
    }
}
