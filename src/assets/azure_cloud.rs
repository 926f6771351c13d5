//! Azure `cloudName` and `armEndpoint`: the install-config's `platform.azure.*`, else the
//! Infrastructure manifest's `status.platformStatus.azure.*`, where the installer copies them
//! (openshift/installer pkg/asset/manifests/infrastructure.go; `armEndpoint` only for Azure
//! Stack Hub). Validated as the installer validates them (pkg/types/azure/validation/
//! platform.go): a known name, `armEndpoint` exactly with `AzureStackCloud`. When both files
//! name a cloud they must agree: the installer writes the one from the other.

use super::doc::Doc;
use crate::error::InputError;
use bootstrap_cloud::azure_cloud::AzureCloud;

const IC: &str = "platform.azure";
const INFRA: &str = "status.platformStatus.azure";

pub fn read(ic: &Doc, infra: &Doc) -> Result<AzureCloud, InputError> {
    let ic_err = |field: &str, problem: String| {
        ic.error(&format!("data.install-config: {IC}.{field}"), problem)
    };
    let ic_text = |field: &str| {
        ic.opt_str(&format!("{IC}.{field}"))
            .map_err(|e| ic.error(&format!("data.install-config: {}", e.field), e.problem))
    };
    let infra_text = |field: &str| infra.opt_str(&format!("{INFRA}.{field}"));
    let (ic_name, ic_arm) = (ic_text("cloudName")?, ic_text("armEndpoint")?);
    let (infra_name, infra_arm) = (infra_text("cloudName")?, infra_text("armEndpoint")?);
    if ic_name.is_some() || ic_arm.is_some() {
        let cloud = AzureCloud::parse(ic_name, ic_arm).map_err(|(f, p)| ic_err(f, p))?;
        if let Some(written) = infra_name
            && written != cloud.name()
        {
            return Err(infra.error(
                &format!("{INFRA}.cloudName"),
                format!(
                    "is {written:?}, but the install-config's platform.azure.cloudName is {:?}; expected the same",
                    cloud.name()
                ),
            ));
        }
        return Ok(cloud);
    }
    AzureCloud::parse(infra_name, infra_arm)
        .map_err(|(f, p)| infra.error(&format!("{INFRA}.{f}"), p))
}
