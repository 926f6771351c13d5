//! Where `api` / `api-int` go: the zones as the installer's DNS manifest
//! (`manifests/cluster-dns-02-config.yml`, DNS `cluster`) names them, else as the install-config
//! does, else by domain and visibility.
//!
//! What the installer writes there (openshift/installer pkg/asset/manifests/dns.go):
//! - AWS: `publicZone.id` (the public zone for `baseDomain`, `/hostedzone/` stripped) when
//!   publish is External; `privateZone.id: <platform.aws.hostedZone>` or, for the zone it makes
//!   itself, `privateZone.tags {Name: <infra-id>-int, kubernetes.io/cluster/<infra-id>: owned}`;
//!   `spec.platform.aws.privateZoneIAMRole: <platform.aws.hostedZoneRole>` when set.
//! - GCP: `projects/<p>/managedZones/<z>` ids (older installers: the bare zone name); the
//!   private zone's project is `platform.gcp.dns.privateZone.projectID` for a Shared VPC.
//! - Azure: ARM ids built from the installer's subscription and resource groups, not looked
//!   up (pkg/asset/installconfig/azure/dns.go); the agent builds the same paths from the same
//!   install-config fields, so they are not read here.
//! - user-provisioned DNS: no zones (AWS, GCP) or empty ids (Azure, older GCP).

use super::doc::{self, Doc};
use super::{DnsZones, Platform};
use crate::error::InputError;
use bootstrap_cloud::ZoneRef;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

pub const DNS_CONFIG: &str = "manifests/cluster-dns-02-config.yml";

/// The zones of a cluster named `cluster_domain` under `base_domain`. `ic` is the embedded
/// install-config (its errors are reported as `data.install-config: <field>`).
pub fn zones(
    manifest: Option<Doc>,
    ic: &Doc,
    platform: &Platform,
    cluster_domain: &str,
    base_domain: &str,
) -> Result<DnsZones, InputError> {
    let mut zones = DnsZones {
        private: ZoneRef {
            domain: cluster_domain.to_string(),
            private: true,
            ..ZoneRef::default()
        },
        public: ZoneRef {
            domain: base_domain.to_string(),
            private: false,
            ..ZoneRef::default()
        },
        private_source: None,
        public_source: None,
        private_zone_role: None,
    };
    if let Some(m) = &manifest
        && let Some(domain) = m.opt_str("spec.baseDomain")?
        && domain.trim_end_matches('.') != cluster_domain
    {
        return Err(m.error(
            "spec.baseDomain",
            format!(
                "is {domain:?}, but the install-config's cluster domain is {cluster_domain:?}; expected the same"
            ),
        ));
    }
    let ic_err = |e: InputError| {
        InputError::new(
            &ic.file,
            format!("data.install-config: {}", e.field),
            e.problem,
        )
    };
    match platform {
        Platform::Aws(aws) => {
            if let Some(m) = &manifest {
                read_zone(m, "spec.privateZone", true, &mut zones)?;
                read_zone(m, "spec.publicZone", true, &mut zones)?;
                let role_field = "spec.platform.aws.privateZoneIAMRole";
                if let Some(role) = m.opt_str(role_field)? {
                    zones.private_zone_role = Some(role.to_string());
                }
                if let (Some(given), Some(id)) = (&aws.hosted_zone, &zones.private.id)
                    && given != id
                {
                    return Err(m.error(
                        "spec.privateZone.id",
                        format!("is {id:?}, but the install-config's platform.aws.hostedZone is {given:?}; expected the same"),
                    ));
                }
            }
            if zones.private.id.is_none()
                && zones.private.tags.is_empty()
                && let Some(id) = &aws.hosted_zone
            {
                zones.private.id = Some(id.clone());
                zones.private_source = Some("install-config platform.aws.hostedZone".into());
            }
            let role = ic.opt_str("platform.aws.hostedZoneRole").map_err(ic_err)?;
            match (role, &zones.private_zone_role) {
                (Some(given), Some(written)) if given != written => {
                    return Err(manifest_error(
                        manifest.as_ref(),
                        "spec.platform.aws.privateZoneIAMRole",
                        format!(
                            "is {written:?}, but the install-config's platform.aws.hostedZoneRole is {given:?}; expected the same"
                        ),
                    ));
                }
                (Some(given), None) => zones.private_zone_role = Some(given.to_string()),
                _ => {}
            }
            if zones.private_zone_role.is_some() && zones.private.id.is_none() {
                return Err(InputError::new(
                    &ic.file,
                    "data.install-config: platform.aws.hostedZoneRole",
                    "is set without platform.aws.hostedZone; expected the id of the other account's private zone next to it (the installer requires both)",
                ));
            }
        }
        Platform::Gcp(gcp) => {
            if let Some(m) = &manifest {
                read_zone(m, "spec.privateZone", false, &mut zones)?;
                read_zone(m, "spec.publicZone", false, &mut zones)?;
            }
            if zones.private.id.is_none() && ic.get("platform.gcp.dns.privateZone").is_some() {
                let name = ic
                    .str("platform.gcp.dns.privateZone.name")
                    .map_err(ic_err)?;
                let project = ic
                    .opt_str("platform.gcp.dns.privateZone.projectID")
                    .map_err(ic_err)?
                    .unwrap_or(&gcp.project);
                zones.private.id = Some(format!("projects/{project}/managedZones/{name}"));
                zones.private_source = Some("install-config platform.gcp.dns.privateZone".into());
            }
        }
        Platform::Azure(_) | Platform::None => {}
    }
    Ok(zones)
}

fn manifest_error(manifest: Option<&Doc>, field: &str, problem: String) -> InputError {
    match manifest {
        Some(m) => m.error(field, problem),
        None => InputError::new(Path::new(DNS_CONFIG), field, problem),
    }
}

/// One `DNSZone` (`id`, or on AWS `tags`) of the manifest into the private or public ref. An
/// empty id is what user-provisioned DNS (and older GCP installers) write: no zone.
fn read_zone(
    m: &Doc,
    field: &str,
    tags_allowed: bool,
    zones: &mut DnsZones,
) -> Result<(), InputError> {
    let Some(block) = m.get(field) else {
        return Ok(());
    };
    if !block.is_object() {
        return Err(m.error(
            field,
            format!(
                "expected a mapping with id or tags, found {}",
                doc::kind(block)
            ),
        ));
    }
    let (zone, source) = if field.ends_with("privateZone") {
        (&mut zones.private, &mut zones.private_source)
    } else {
        (&mut zones.public, &mut zones.public_source)
    };
    match block.get("id") {
        None | Some(Value::Null) => {}
        Some(Value::String(id)) if id.trim().is_empty() => {}
        Some(Value::String(id)) => {
            zone.id = Some(id.trim_start_matches("/hostedzone/").to_string());
            *source = Some(format!("{DNS_CONFIG} {field}.id"));
            return Ok(());
        }
        Some(other) => {
            return Err(m.error(
                &format!("{field}.id"),
                format!("expected a string, found {}", doc::kind(other)),
            ));
        }
    }
    match block.get("tags") {
        None | Some(Value::Null) => Ok(()),
        Some(Value::Object(tags)) if !tags_allowed && !tags.is_empty() => Err(m.error(
            &format!("{field}.tags"),
            "tags name a zone on AWS only (openshift/api DNSZone); expected id",
        )),
        Some(Value::Object(tags)) => {
            let mut wanted = BTreeMap::new();
            for (key, value) in tags {
                let Value::String(value) = value else {
                    return Err(m.error(
                        &format!("{field}.tags.{key}"),
                        format!("expected a string, found {}", doc::kind(value)),
                    ));
                };
                wanted.insert(key.clone(), value.clone());
            }
            if !wanted.is_empty() {
                zone.tags = wanted;
                *source = Some(format!("{DNS_CONFIG} {field}.tags"));
            }
            Ok(())
        }
        Some(other) => Err(m.error(
            &format!("{field}.tags"),
            format!(
                "expected a mapping of tag keys to values, found {}",
                doc::kind(other)
            ),
        )),
    }
}
