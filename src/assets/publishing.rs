//! Who the API is published to and who writes its DNS: `publish` with
//! `operatorPublishingStrategy`, and user-provisioned (cluster-hosted) DNS.

use super::doc::{self, Doc};
use super::spec::*;
use super::{FieldError, INFRASTRUCTURE, field_err, platform_name};
use crate::error::InputError;
use serde_json::Value;

/// `publish` and `operatorPublishingStrategy`, validated as the installer validates them
/// (openshift/installer pkg/types/validation/installconfig.go): Internal on the clouds only,
/// Mixed on Azure only and only with `operatorPublishingStrategy`, which no other strategy may
/// carry; its sides default to External, and both Internal is refused.
pub(super) fn publish(ic: &Doc) -> Result<Publish, FieldError> {
    const OPS: &str = "operatorPublishingStrategy";
    let platform = platform_name(ic)?;
    let strategy = match ic.get("publish") {
        None => "External",
        Some(Value::String(s)) if s.is_empty() => "External",
        Some(Value::String(s)) if ["External", "Internal", "Mixed"].contains(&s.as_str()) => {
            s.as_str()
        }
        Some(Value::String(s)) => {
            return Err(field_err(
                "publish",
                format!("expected External, Internal or Mixed, found {s:?}"),
            ));
        }
        Some(other) => {
            return Err(field_err(
                "publish",
                format!(
                    "expected External, Internal or Mixed, found {}",
                    doc::kind(other)
                ),
            ));
        }
    };
    let ops = ic.get(OPS);
    if strategy != "Mixed" && ops.is_some() {
        return Err(field_err(
            OPS,
            format!("is allowed only with publish Mixed, but publish is {strategy}"),
        ));
    }
    match strategy {
        "Internal" if platform == "none" => Err(field_err(
            "publish",
            "Internal is not supported on platform none; expected External (the installer allows Internal on aws, azure, gcp, ibmcloud and powervs)",
        )),
        "Internal" => Ok(Publish::Internal),
        "Mixed" if platform != "azure" => Err(field_err(
            "publish",
            format!(
                "Mixed is supported only on platform azure, not {platform}; expected External or Internal"
            ),
        )),
        "Mixed" => {
            let ops = ops.ok_or_else(|| {
                field_err(
                    OPS,
                    "missing; publish Mixed needs it, with apiserver and ingress each External or Internal",
                )
            })?;
            if !ops.is_object() {
                return Err(field_err(
                    OPS,
                    format!(
                        "expected a mapping with apiserver and ingress, found {}",
                        doc::kind(ops)
                    ),
                ));
            }
            let side = |name: &str| -> Result<Exposure, FieldError> {
                match ops.get(name) {
                    None | Some(Value::Null) => Ok(Exposure::External),
                    Some(Value::String(s)) if s.is_empty() || s == "External" => {
                        Ok(Exposure::External)
                    }
                    Some(Value::String(s)) if s == "Internal" => Ok(Exposure::Internal),
                    Some(Value::String(s)) => Err(field_err(
                        &format!("{OPS}.{name}"),
                        format!("expected External or Internal, found {s:?}"),
                    )),
                    Some(other) => Err(field_err(
                        &format!("{OPS}.{name}"),
                        format!("expected External or Internal, found {}", doc::kind(other)),
                    )),
                }
            };
            let (apiserver, ingress) = (side("apiserver")?, side("ingress")?);
            if apiserver == Exposure::Internal && ingress == Exposure::Internal {
                return Err(field_err(
                    OPS,
                    "apiserver and ingress are both Internal, which the installer refuses in a Mixed cluster; expected publish: Internal instead",
                ));
            }
            Ok(Publish::Mixed { apiserver, ingress })
        }
        // External: the one value left after the check above.
        _ => Ok(Publish::External),
    }
}

/// User-managed DNS: `platform.<cloud>.userProvisionedDNS: Enabled` in the install-config
/// (Enabled or Disabled, default Disabled; openshift/installer pkg/types/{aws,azure,gcp}/
/// platform.go), or `status.platformStatus.<cloud>.cloudLoadBalancerConfig.dnsType:
/// ClusterHosted` in the Infrastructure manifest (PlatformDefault or ClusterHosted;
/// openshift/api config/v1/types_infrastructure.go). The installer writes ClusterHosted exactly
/// when the switch is Enabled, so Enabled next to PlatformDefault is a contradiction.
pub(super) fn dns_management(
    ic: &Doc,
    infra: &Doc,
    platform: &Platform,
) -> Result<DnsManagement, InputError> {
    let cloud = match platform {
        Platform::Aws(_) => "aws",
        Platform::Azure(_) => "azure",
        Platform::Gcp(_) => "gcp",
        // Platform none writes no DNS in either case.
        Platform::None => return Ok(DnsManagement::Cloud),
    };
    let switch = format!("platform.{cloud}.userProvisionedDNS");
    let enabled = match ic.get(&switch) {
        None => false,
        Some(Value::String(s)) if s.is_empty() || s == "Disabled" => false,
        Some(Value::String(s)) if s == "Enabled" => true,
        Some(other) => {
            let found = match other {
                Value::String(s) => format!("{s:?}"),
                other => doc::kind(other).to_string(),
            };
            return Err(InputError::new(
                &ic.file,
                format!("data.install-config: {switch}"),
                format!("expected Enabled or Disabled, found {found}"),
            ));
        }
    };
    let dns_type_field = format!("status.platformStatus.{cloud}.cloudLoadBalancerConfig.dnsType");
    let dns_type = infra.opt_str(&dns_type_field)?;
    match dns_type {
        None | Some("ClusterHosted") => {}
        Some("PlatformDefault") if enabled => {
            return Err(infra.error(
                &dns_type_field,
                format!(
                    "is PlatformDefault, but the install-config's {switch} is Enabled (the installer writes ClusterHosted then); expected ClusterHosted"
                ),
            ));
        }
        Some("PlatformDefault") => {}
        Some(other) => {
            return Err(infra.error(
                &dns_type_field,
                format!("expected PlatformDefault or ClusterHosted, found {other:?}"),
            ));
        }
    }
    Ok(if enabled {
        DnsManagement::UserManaged {
            because: format!("install-config {switch}: Enabled"),
        }
    } else if dns_type == Some("ClusterHosted") {
        DnsManagement::UserManaged {
            because: format!("{INFRASTRUCTURE} {dns_type_field}: ClusterHosted"),
        }
    } else {
        DnsManagement::Cloud
    })
}
