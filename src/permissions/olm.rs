//! The IAM policies of what `bootstrap-agent manifests aws-load-balancer-controller` brings:
//! OpenShift's aws-load-balancer-operator and the AWS Load Balancer Controller it runs. Data,
//! not a table of ours: the operator's own CredentialsRequests, vendored unchanged in `olm/`
//! (openshift/aws-load-balancer-operator at a7bf441dc8f76dfe7768bf8e8a431b2f8f250006:
//! `hack/operator-credentials-request.yaml`, which the operator requests for itself, and
//! `hack/controller/controller-credentials-request.yaml`, the controller's full policy that
//! `docs/install.md` hands to ccoctl for the STS role). Their `statementEntries` are turned
//! into an IAM policy document as the cloud-credential operator does (effect, action,
//! resource, and `policyCondition` as `Condition`).
//!
//! In CCO's mint mode the controller's minted user gets the operator's minified policy
//! instead (`hack/controller/controller-credentials-request-minify.yaml`: wildcards such as
//! `ec2:Describe*`, and no conditions, to fit a user inline policy's 2048 characters), which
//! grants more; the one printed here is what the controller needs.

use anyhow::{Context, Result};
use serde::Deserialize;
use serde_json::{Map, Value, json};

const OPERATOR: &str = include_str!("olm/aws-load-balancer-operator.yaml");
const CONTROLLER: &str = include_str!("olm/aws-load-balancer-controller.yaml");

/// Whose policy `permissions --for` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Whose {
    /// The operator itself (OLM installs it): reads subnets and VPCs, tags subnets.
    AwsLoadBalancerOperator,
    /// The controller the operator runs: builds the NLBs of the agent's Services.
    AwsLoadBalancerController,
}

#[derive(Deserialize)]
struct CredentialsRequest {
    spec: Spec,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    provider_spec: ProviderSpec,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProviderSpec {
    statement_entries: Vec<Entry>,
}

/// cloud-credential-operator `pkg/apis/cloudcredential/v1` `StatementEntry`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    effect: String,
    action: Vec<String>,
    resource: String,
    #[serde(default)]
    policy_condition: Option<Map<String, Value>>,
}

/// The IAM policy document of `whose`.
pub fn policy(whose: Whose) -> Result<Value> {
    let (name, text) = match whose {
        Whose::AwsLoadBalancerOperator => ("aws-load-balancer-operator", OPERATOR),
        Whose::AwsLoadBalancerController => ("aws-load-balancer-controller", CONTROLLER),
    };
    let request: CredentialsRequest = serde_saphyr::from_str(text)
        .with_context(|| format!("the vendored CredentialsRequest of {name}"))?;
    let statements: Vec<Value> = request
        .spec
        .provider_spec
        .statement_entries
        .into_iter()
        .map(|e| {
            let mut s = json!({"Effect": e.effect, "Action": e.action, "Resource": e.resource});
            if let Some(c) = e.policy_condition.filter(|c| !c.is_empty()) {
                s["Condition"] = Value::Object(c);
            }
            s
        })
        .collect();
    Ok(json!({"Version": "2012-10-17", "Statement": statements}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actions(policy: &Value) -> Vec<String> {
        policy["Statement"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["Action"].as_array().unwrap())
            .map(|a| a.as_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn the_operators_policy_is_its_credentials_request() {
        let p = policy(Whose::AwsLoadBalancerOperator).unwrap();
        assert_eq!(
            actions(&p),
            [
                "ec2:DescribeSubnets",
                "ec2:CreateTags",
                "ec2:DeleteTags",
                "ec2:DescribeVpcs"
            ]
        );
        assert_eq!(p["Statement"][1]["Resource"], "arn:aws:ec2:*:*:subnet/*");
    }

    #[test]
    fn the_controllers_policy_keeps_its_conditions() {
        let p = policy(Whose::AwsLoadBalancerController).unwrap();
        let all = actions(&p);
        // What the agent's Services make it do: NLBs, target groups, their security groups.
        for needed in [
            "elasticloadbalancing:CreateLoadBalancer",
            "elasticloadbalancing:CreateTargetGroup",
            "ec2:CreateSecurityGroup",
            "ec2:AuthorizeSecurityGroupIngress",
        ] {
            assert!(all.iter().any(|a| a == needed), "{needed}");
        }
        assert_eq!(
            p["Statement"][0]["Condition"],
            json!({"StringEquals": {"iam:AWSServiceName": "elasticloadbalancing.amazonaws.com"}})
        );
        assert!(!all.iter().any(|a| a.ends_with('*')), "no wildcards");
    }
}
