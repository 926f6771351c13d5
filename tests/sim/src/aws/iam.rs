//! IAM in the AWS world: moto's users and their access keys, requests made as one of them,
//! and the switch that enforces IAM on moto (and, through the proxy, on Route53).

use super::{AwsPeers, path};
#[cfg(doc)]
use crate::proxy::Proxy;
use anyhow::{Result, bail};
use serde_json::Value;

/// An IAM user of moto and its access key ([`AwsPeers::create_iam_user`]).
#[derive(Debug, Clone)]
pub struct IamUser {
    pub arn: String,
    pub access_key_id: String,
    pub secret_access_key: String,
}

impl AwsPeers {
    /// Releases the EIP `allocation` with boto3 as `user` (IAM enforcement on: allowed or not
    /// by its policy).
    pub async fn release_eip_as(&self, allocation: &str, user: &IamUser) -> Result<()> {
        self.script(&[
            "release-eip",
            "--allocation",
            allocation,
            "--key",
            &user.access_key_id,
            "--secret",
            &user.secret_access_key,
        ])
        .await
        .map(|_| ())
    }

    /// ListResourceRecordSets of `zone_id` with boto3 as `user`, through the Route53 counting
    /// proxy (IAM enforcement on: authorized as Route53 does, [`Proxy::authorize_with`]):
    /// `{"records": n}`, or the refusal's `{"status", "code", "message"}`.
    pub async fn list_records_as(&self, zone_id: &str, user: &IamUser) -> Result<Value> {
        let via = self.route53_proxy.url();
        self.script(&[
            "list-records",
            "--zone-id",
            zone_id,
            "--key",
            &user.access_key_id,
            "--secret",
            &user.secret_access_key,
            "--via",
            &via,
        ])
        .await
    }

    /// An IAM user in moto whose one inline policy is `document` (an IAM policy document, as
    /// `bootstrap-agent permissions --cloud aws` prints it), with an access key.
    pub async fn create_iam_user_with_policy(
        &self,
        name: &str,
        document: &Value,
    ) -> Result<IamUser> {
        let file = tempfile::NamedTempFile::new()?;
        std::fs::write(file.path(), serde_json::to_vec(document)?)?;
        let path = path(file.path())?;
        let out = self
            .script(&["iam-user", "--name", name, "--policy", &path])
            .await?;
        iam_user_of(&out)
    }

    /// An IAM user in moto whose one policy allows `actions` (e.g. `ec2:AllocateAddress`) on
    /// every resource, with an access key. Counts only once [`Self::enforce_iam`] is on.
    pub async fn create_iam_user(&self, name: &str, actions: &[&str]) -> Result<IamUser> {
        let mut args = vec!["iam-user", "--name", name];
        for action in actions {
            args.extend(["--allow", action]);
        }
        let out = self.script(&args).await?;
        iam_user_of(&out)
    }

    /// Switches moto's IAM enforcement on or off (moto's `/moto-api/reset-auth`). On, every
    /// request to moto (EC2, and STS when `AWS_ENDPOINT_URL_STS` points at moto) must be signed
    /// with an IAM user's key and allowed by its policies; this world's own inspection
    /// (`inspect`, which uses no IAM user) works only while it is off. ministack (Route53)
    /// knows no IAM: while on, the Route53 proxy has moto authorize each request first, on
    /// its hosted zone or change ARN, as Route53 does ([`Proxy::authorize_with`]).
    pub async fn enforce_iam(&self, on: bool) -> Result<()> {
        let value = if on { "on" } else { "off" };
        self.script(&["enforce-iam", "--value", value]).await?;
        self.route53_proxy
            .authorize_with(on.then_some(self.ec2.addr));
        Ok(())
    }
}

fn iam_user_of(out: &Value) -> Result<IamUser> {
    match (
        out["arn"].as_str(),
        out["access_key_id"].as_str(),
        out["secret_access_key"].as_str(),
    ) {
        (Some(arn), Some(key), Some(secret)) => Ok(IamUser {
            arn: arn.to_string(),
            access_key_id: key.to_string(),
            secret_access_key: secret.to_string(),
        }),
        _ => bail!("iam-user printed {out}"),
    }
}
