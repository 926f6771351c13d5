//! PURE: the four documents that make OLM install the AWS Load Balancer Controller during the
//! install, through OpenShift's aws-load-balancer-operator. Every field is one the operator's
//! own docs or CRDs name (openshift/aws-load-balancer-operator at
//! a7bf441dc8f76dfe7768bf8e8a431b2f8f250006):
//!
//! - Namespace, OperatorGroup and Subscription as `docs/install.md` writes them; the package
//!   `aws-load-balancer-operator` and the default channel `stable-v1` from
//!   `bundle/metadata/annotations.yaml`; the CSV supports the AllNamespaces install mode only
//!   (`bundle/manifests/aws-load-balancer-operator.clusterserviceversion.yaml`
//!   `installModes`), which an OperatorGroup without target namespaces selects.
//! - `installPlanApproval: Automatic` stated, not left to the default: a Manual approval would
//!   leave the install waiting for a person.
//! - The `AWSLoadBalancerController` named `cluster` (the only name the operator reconciles,
//!   `pkg/controllers/awsloadbalancercontroller/controller.go`), `networking.olm.openshift.io/v1`
//!   (`config/crd/bases/networking.olm.openshift.io_awsloadbalancercontrollers.yaml`, the
//!   storage version).
//! - Credentials: the operator itself creates both CredentialsRequests, its own
//!   (`pkg/operator/credentials.go`) and the controller's
//!   (`pkg/controllers/awsloadbalancercontroller/credentials_request.go`), so in CCO's mint
//!   mode nothing more is needed. For STS (`docs/install.md`, "STS clusters"): the operator's
//!   role ARN in the Subscription's `config.env` `ROLEARN`, the controller's in
//!   `spec.credentialsRequestConfig.stsIAMRoleARN`.

use serde_json::{Value, json};

pub const NAMESPACE: &str = "aws-load-balancer-operator";
/// The OLM package (`operators.operatorframework.io.bundle.package.v1`).
pub const PACKAGE: &str = "aws-load-balancer-operator";
/// `operators.operatorframework.io.bundle.channel.default.v1`.
pub const DEFAULT_CHANNEL: &str = "stable-v1";
pub const DEFAULT_SOURCE: &str = "redhat-operators";
pub const DEFAULT_SOURCE_NAMESPACE: &str = "openshift-marketplace";
/// The CRD's `stsIAMRoleARN` pattern; the stricter of the two the operator applies (the
/// operator's own `ROLEARN` only has to parse as an ARN).
pub const ROLE_ARN_PATTERN: &str = r"^arn:(aws|aws-cn|aws-us-gov):iam::[0-9]{12}:role\/.*$";

/// `spec.subnetTagging`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SubnetTagging {
    /// The operator tags the cluster's untagged subnets `kubernetes.io/role/elb` (it assumes
    /// every untagged one is public) and keeps them tagged.
    Auto,
    /// The operator writes no subnet tags.
    Manual,
}

impl SubnetTagging {
    fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "Auto",
            Self::Manual => "Manual",
        }
    }
}

/// The IAM roles of STS (manual mode with short-lived tokens), both made beforehand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StsRoles {
    pub operator: String,
    pub controller: String,
}

/// What the documents depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choices {
    pub channel: String,
    pub source: String,
    pub source_namespace: String,
    pub subnet_tagging: SubnetTagging,
    /// None: CCO mints the credentials (mint or passthrough mode).
    pub sts: Option<StsRoles>,
}

impl Default for Choices {
    fn default() -> Self {
        Self {
            channel: DEFAULT_CHANNEL.into(),
            source: DEFAULT_SOURCE.into(),
            source_namespace: DEFAULT_SOURCE_NAMESPACE.into(),
            subnet_tagging: SubnetTagging::Manual,
            sts: None,
        }
    }
}

/// One manifest: the file name `--dir` writes it to, and the object.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub file: String,
    pub object: Value,
}

/// The documents in the order they must exist: the Namespace before what lives in it, the
/// OperatorGroup before the Subscription (OLM refuses to install without one), and the
/// controller resource last (its CRD exists only once OLM installed the operator). File
/// names sort in that order, as the installer creates `openshift/` manifests by name.
pub fn documents(c: &Choices) -> Vec<Manifest> {
    let file = |n: u8, what: &str| format!("99_{NAMESPACE}_{n:02}_{what}.yaml");
    let mut subscription = json!({
        "apiVersion": "operators.coreos.com/v1alpha1",
        "kind": "Subscription",
        "metadata": {"name": PACKAGE, "namespace": NAMESPACE},
        "spec": {
            "channel": c.channel,
            "installPlanApproval": "Automatic",
            "name": PACKAGE,
            "source": c.source,
            "sourceNamespace": c.source_namespace,
        }
    });
    let mut controller = json!({
        "apiVersion": "networking.olm.openshift.io/v1",
        "kind": "AWSLoadBalancerController",
        "metadata": {"name": "cluster"},
        "spec": {"subnetTagging": c.subnet_tagging.as_str()}
    });
    if let Some(sts) = &c.sts {
        subscription["spec"]["config"] =
            json!({"env": [{"name": "ROLEARN", "value": sts.operator}]});
        controller["spec"]["credentialsRequestConfig"] = json!({"stsIAMRoleARN": sts.controller});
    }
    vec![
        Manifest {
            file: file(0, "namespace"),
            object: json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": NAMESPACE},
            }),
        },
        Manifest {
            file: file(1, "operatorgroup"),
            object: json!({
                "apiVersion": "operators.coreos.com/v1",
                "kind": "OperatorGroup",
                "metadata": {"name": NAMESPACE, "namespace": NAMESPACE},
                "spec": {"targetNamespaces": []},
            }),
        },
        Manifest {
            file: file(2, "subscription"),
            object: subscription,
        },
        Manifest {
            file: file(3, "awsloadbalancercontroller"),
            object: controller,
        },
    ]
}

/// `--sts-*-role-arn`: an IAM role ARN as the CRD's pattern has it.
pub fn role_arn(text: &str) -> Result<String, String> {
    let expected = "expected an IAM role ARN like arn:aws:iam::123456789012:role/name";
    let mut parts = text.splitn(6, ':');
    let (Some("arn"), Some(partition), Some("iam"), Some(""), Some(account), Some(resource)) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(expected.to_string());
    };
    if !matches!(partition, "aws" | "aws-cn" | "aws-us-gov") {
        return Err(format!(
            "partition {partition:?} is not aws, aws-cn or aws-us-gov; {expected}"
        ));
    }
    if account.len() != 12 || !account.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("account {account:?} is not 12 digits; {expected}"));
    }
    if !resource.starts_with("role/") {
        return Err(format!("{resource:?} is not a role; {expected}"));
    }
    Ok(text.to_string())
}

/// `--source`: a CatalogSource name (a DNS-1123 subdomain).
pub fn catalog_source(text: &str) -> Result<String, String> {
    dns_name(text, 253, "a CatalogSource name like redhat-operators")
}

/// `--source-namespace`: a namespace name (a DNS-1123 label).
pub fn namespace(text: &str) -> Result<String, String> {
    if text.contains('.') {
        return Err("a namespace has no dots; expected a name like openshift-marketplace".into());
    }
    dns_name(text, 63, "a namespace like openshift-marketplace")
}

/// `--channel`: not empty, no blanks.
pub fn channel(text: &str) -> Result<String, String> {
    if text.is_empty() || text.chars().any(char::is_whitespace) {
        return Err("expected an OLM channel like stable-v1".into());
    }
    Ok(text.to_string())
}

fn dns_name(text: &str, max: usize, what: &str) -> Result<String, String> {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    if text.len() <= max && text.split('.').all(label_ok) {
        Ok(text.to_string())
    } else {
        Err(format!(
            "lower-case letters, digits, '-' (and '.' between labels) only, at most {max}; expected {what}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mint_mode_has_no_credentials_fields_and_sts_sets_both_roles() {
        let docs = documents(&Choices::default());
        let kinds: Vec<&str> = docs
            .iter()
            .map(|d| d.object["kind"].as_str().unwrap())
            .collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "OperatorGroup",
                "Subscription",
                "AWSLoadBalancerController"
            ]
        );
        assert!(docs[2].object["spec"].get("config").is_none());
        assert!(
            docs[3].object["spec"]
                .get("credentialsRequestConfig")
                .is_none()
        );
        assert_eq!(docs[3].object["spec"]["subnetTagging"], "Manual");

        let sts = documents(&Choices {
            sts: Some(StsRoles {
                operator: "arn:aws:iam::123456789012:role/op".into(),
                controller: "arn:aws:iam::123456789012:role/ctl".into(),
            }),
            ..Choices::default()
        });
        assert_eq!(
            sts[2].object["spec"]["config"]["env"],
            json!([{"name": "ROLEARN", "value": "arn:aws:iam::123456789012:role/op"}])
        );
        assert_eq!(
            sts[3].object["spec"]["credentialsRequestConfig"]["stsIAMRoleARN"],
            "arn:aws:iam::123456789012:role/ctl"
        );
    }

    #[test]
    fn file_names_sort_in_creation_order() {
        let files: Vec<String> = documents(&Choices::default())
            .into_iter()
            .map(|d| d.file)
            .collect();
        let mut sorted = files.clone();
        sorted.sort();
        assert_eq!(files, sorted);
        assert_eq!(files[0], "99_aws-load-balancer-operator_00_namespace.yaml");
    }

    #[test]
    fn role_arns_follow_the_crds_pattern() {
        assert!(role_arn("arn:aws:iam::123456789012:role/x").is_ok());
        assert!(role_arn("arn:aws-us-gov:iam::123456789012:role/a/b").is_ok());
        for bad in [
            "",
            "role/x",
            "arn:aws:iam::12345:role/x",
            "arn:aws:iam::123456789012:user/x",
            "arn:aws:s3::123456789012:role/x",
            "arn:azure:iam::123456789012:role/x",
        ] {
            let e = role_arn(bad).unwrap_err();
            assert!(e.contains("expected an IAM role ARN"), "{bad}: {e}");
        }
    }

    #[test]
    fn names_are_checked_as_kubernetes_checks_them() {
        assert!(catalog_source("cs-redhat-operator-index.v1").is_ok());
        assert!(catalog_source("Redhat").is_err());
        assert!(namespace("openshift-marketplace").is_ok());
        assert!(namespace("a.b").is_err());
        assert!(channel("stable-v1").is_ok());
        assert!(channel("").is_err());
    }
}
