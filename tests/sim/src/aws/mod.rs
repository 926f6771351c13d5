//! The AWS world: moto (EC2) and ministack (Route53), each behind a counting proxy, plus the
//! boto3 script that builds the VPC/zones (and the installer's control-plane machines) and
//! inspects what exists.
//!
//! What other parties do beside the agent (another writer, another cluster, a user with
//! boto3) is in `by_hand`, the IAM users and their enforcement in `iam`; this file holds the
//! world itself: starting it, setting it up, reading it.

mod by_hand;
mod iam;

pub use iam::IamUser;

use crate::emulator::Emulator;
use crate::kube::CloudOptions;
use crate::proxy::{Proxy, Service};
use crate::venv;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How the world's subnets are laid out.
#[derive(Debug, Clone)]
pub enum VpcLayout {
    /// The fixture's subnets, untagged (their roles are in the install-config).
    Byo,
    /// The VPC the installer makes when the install-config names no subnets: one private and
    /// one public subnet per AZ tagged `kubernetes.io/cluster/<infra-id>=owned` with their role
    /// tags, a subnet tagged for the cluster without role tags, and subnets of others.
    Installer,
    /// The fixture's subnets untagged; `public` (fixture ids) route 0.0.0.0/0 to an internet
    /// gateway through an explicitly associated table, the others do not.
    Flat { public: Vec<String> },
}

pub struct AwsPeers {
    pub venv: PathBuf,
    pub ec2: Emulator,
    pub route53: Emulator,
    pub ec2_proxy: Proxy,
    pub route53_proxy: Proxy,
    /// The installer's control plane the world's setup made (None before it).
    control_plane: std::sync::Mutex<Option<ControlPlane>>,
}

/// The installer's control plane as the world's setup makes it in moto (`aws_world.py`
/// `masters`): instances `<infra-id>-master-<i>` whose primary ENIs hold `ips` and have CAPA's
/// three security groups, only `<infra-id>-lb` tagged `kubernetes.io/cluster/<infra-id>`.
#[derive(Debug, Clone, Default)]
pub struct ControlPlane {
    pub infra_id: String,
    pub ips: Vec<std::net::Ipv4Addr>,
    /// Security group ids by CAPA role (`lb`, `controlplane`, `node`).
    pub groups: std::collections::BTreeMap<String, String>,
}

impl ControlPlane {
    fn of(setup: &Value) -> Option<Self> {
        let cp = setup.get("control_plane")?;
        Some(Self {
            infra_id: cp["infra_id"].as_str()?.to_string(),
            ips: cp["ips"]
                .as_array()?
                .iter()
                .filter_map(|ip| ip.as_str()?.parse().ok())
                .collect(),
            groups: cp["groups"]
                .as_object()?
                .iter()
                .filter_map(|(role, id)| Some((role.clone(), id.as_str()?.to_string())))
                .collect(),
        })
    }
}

crate::proxy::counting_proxies!(AwsPeers: ec2_proxy, route53_proxy);

impl AwsPeers {
    pub async fn start() -> Result<Self> {
        Self::start_with(&[]).await
    }

    /// An account whose Elastic IP limit is `limit` (moto_server.py enforces it as EC2 does).
    pub async fn start_with_eip_limit(limit: u32) -> Result<Self> {
        Self::start_with(&[("MOTO_VPC_MAX_ELASTIC_IPS", &limit.to_string())]).await
    }

    /// An account whose Route53 changes stay PENDING for `propagation` (real Route53:
    /// "generally within 60 seconds") before they are INSYNC.
    pub async fn start_with_propagation(propagation: std::time::Duration) -> Result<Self> {
        let ms = propagation.as_millis().to_string();
        Self::start_with_envs(&[], &[("MINISTACK_CHANGE_PROPAGATION_MS", &ms)]).await
    }

    async fn start_with(moto_env: &[(&str, &str)]) -> Result<Self> {
        Self::start_with_envs(moto_env, &[]).await
    }

    async fn start_with_envs(
        moto_env: &[(&str, &str)],
        ministack_env: &[(&str, &str)],
    ) -> Result<Self> {
        let venv = tokio::task::spawn_blocking(venv::ensure).await??;
        let (ec2, route53) = tokio::try_join!(
            Emulator::moto_with(&venv, moto_env),
            Emulator::ministack_with(&venv, ministack_env)
        )?;
        let ec2_proxy = Proxy::start(ec2.addr, Service::Ec2).await?;
        let route53_proxy = Proxy::start(route53.addr, Service::Route53).await?;
        Ok(Self {
            venv,
            ec2,
            route53,
            ec2_proxy,
            route53_proxy,
            control_plane: std::sync::Mutex::new(None),
        })
    }

    /// The installer's control plane the world's setup made, once it ran.
    pub fn control_plane(&self) -> Option<ControlPlane> {
        self.control_plane
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The record sets of the hosted zone `zone_id` (`/hostedzone/<id>` or the bare id) as
    /// `{"<fqdn without the final dot> <TYPE>": [values]}`, read straight from ministack's
    /// Route53 REST API (no Python, no proxy: fast enough to poll like a resolver).
    pub async fn records(&self, zone_id: &str) -> Result<serde_json::Map<String, Value>> {
        Ok(self
            .listed(zone_id)
            .await?
            .into_iter()
            .map(|(set, values)| (set, Value::Array(values)))
            .collect())
    }

    /// The first page of ListResourceRecordSets of `zone_id`, in the order it lists them:
    /// `("<fqdn without the final dot> <TYPE>", values)`.
    pub async fn listed(&self, zone_id: &str) -> Result<Vec<(String, Vec<Value>)>> {
        use http_body_util::BodyExt;
        let id = zone_id.trim_start_matches("/hostedzone/");
        let stream = tokio::net::TcpStream::connect(self.route53.addr)
            .await
            .context("cannot reach ministack")?;
        let (mut sender, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(conn);
        let request = hyper::Request::get(format!("/2013-04-01/hostedzone/{id}/rrset"))
            .header("host", self.route53.addr.to_string())
            .header(
                "authorization",
                "AWS4-HMAC-SHA256 Credential=sim/20240101/us-east-1/route53/aws4_request, SignedHeaders=host, Signature=0",
            )
            .body(http_body_util::Empty::<bytes::Bytes>::new())?;
        let response = sender.send_request(request).await?;
        let status = response.status();
        let body = response.into_body().collect().await?.to_bytes();
        let text = String::from_utf8_lossy(&body);
        if !status.is_success() {
            bail!("ListResourceRecordSets {id}: {status} {text}");
        }
        let root = crate::kube::lb::ec2::parse(&text)?;
        let mut sets = Vec::new();
        for set in root
            .child("ResourceRecordSets")
            .map(|s| s.children.as_slice())
            .unwrap_or_default()
        {
            let (Some(name), Some(rtype)) = (set.text_of("Name"), set.text_of("Type")) else {
                continue;
            };
            let values: Vec<Value> = set
                .child("ResourceRecords")
                .map(|r| r.children.as_slice())
                .unwrap_or_default()
                .iter()
                .filter_map(|r| r.text_of("Value"))
                .map(|v| Value::String(v.to_string()))
                .collect();
            sets.push((format!("{} {rtype}", name.trim_end_matches('.')), values));
        }
        Ok(sets)
    }

    /// Environment for the agent: endpoints through the proxies, a fixed region, no profile.
    pub fn agent_env(&self) -> Vec<(String, String)> {
        vec![
            ("AWS_ENDPOINT_URL_EC2".into(), self.ec2_proxy.url()),
            ("AWS_ENDPOINT_URL_ROUTE_53".into(), self.route53_proxy.url()),
            // ministack's STS (for hostedZoneRole, and preflight's GetCallerIdentity): its
            // sessions act in the role's account. Straight to ministack: the proxies count
            // Route53 and EC2 calls only.
            ("AWS_ENDPOINT_URL_STS".into(), self.route53.url()),
            ("AWS_EC2_METADATA_DISABLED".into(), "true".into()),
            ("AWS_CONFIG_FILE".into(), "/dev/null".into()),
            ("AWS_SHARED_CREDENTIALS_FILE".into(), "/dev/null".into()),
        ]
    }

    /// Builds the VPC, subnets and zones and writes the fixture asset dir with real subnet ids
    /// to `out`. Talks to the emulators directly, so the proxies count only the agent.
    pub async fn setup_world(&self, fixture: &Path, out: &Path) -> Result<Value> {
        self.setup_layout(fixture, out, &VpcLayout::Byo).await
    }

    /// [`AwsPeers::setup_world`] with the subnets laid out as `layout` says. The answer's
    /// `layout` holds the subnet ids by kind (`public`, `private`, ...).
    pub async fn setup_layout(
        &self,
        fixture: &Path,
        out: &Path,
        layout: &VpcLayout,
    ) -> Result<Value> {
        let mut args = vec![
            "setup".to_string(),
            "--fixture".into(),
            path(fixture)?,
            "--out".into(),
            path(out)?,
        ];
        match layout {
            VpcLayout::Byo => {}
            VpcLayout::Installer => args.extend(["--layout".into(), "installer".into()]),
            VpcLayout::Flat { public } => {
                args.extend(["--layout".into(), "flat".into()]);
                for id in public {
                    args.extend(["--public".into(), id.clone()]);
                }
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let setup = self.script(&args).await?;
        *self.control_plane.lock().unwrap_or_else(|p| p.into_inner()) = ControlPlane::of(&setup);
        Ok(setup)
    }

    /// What the local API server's load-balancer controller needs to claim NLB addresses in
    /// moto itself (directly, not through the proxy: the proxy counts only the agent).
    /// Once the world is set up, the controller runs with `--cluster-name <infra-id>` and the
    /// nodes are the world's control-plane machines.
    pub fn lb_cloud(&self) -> CloudOptions {
        let control_plane = self.control_plane().unwrap_or_default();
        CloudOptions {
            aws_ec2_endpoint: Some(self.ec2.url()),
            aws_region: "us-east-1".into(),
            aws_cluster_name: Some(control_plane.infra_id).filter(|id| !id.is_empty()),
            control_plane_ips: control_plane.ips,
            ..CloudOptions::default()
        }
    }

    /// What exists now: `{subnets: [{id, cidr}], eips: [{id, ip, tags, eni, association}],
    /// enis: [{id, ip, subnet, description, tags}], zones: {public, private: {"name TYPE":
    /// [values]}}, zones_by_id: {id: {"name TYPE": [values]}}}` (`zones`: the world's two).
    pub async fn inspect(&self) -> Result<Value> {
        self.script(&["inspect"]).await
    }

    /// [`Self::script`] for a command that prints the `id` of what it made.
    async fn script_id(&self, args: &[&str]) -> Result<String> {
        let out = self.script(args).await?;
        let id = out["id"].as_str().map(str::to_string);
        id.with_context(|| format!("{} printed no id", args[0]))
    }

    async fn script(&self, args: &[&str]) -> Result<Value> {
        let (ec2, route53) = (self.ec2.url(), self.route53.url());
        let args = [args, &["--ec2", &ec2, "--route53", &route53]].concat();
        let out = venv::run_script(&self.venv, "aws_world.py", &args).await?;
        if out.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_slice(&out).context("aws_world.py printed no JSON")
    }
}

fn path(p: &Path) -> Result<String> {
    p.to_str().map(str::to_string).context("non-UTF-8 path")
}
