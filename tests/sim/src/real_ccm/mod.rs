//! `bootstrap-sim real-ccm gcp|azure (--ccm PATH | --simulated) [--kubeconfig FILE
//! [--least-privilege]] [--upi] [--output json|text]`: the agent's whole `run`, a second `run` and `teardown --all` with a
//! REAL cloud-controller-manager (built by the user from the cloud's OpenShift fork) as the
//! process that builds the Services' load balancers, against the cloud's loopback fake and the
//! local API server (its simulated load-balancer controller switched off:
//! `CloudOptions::external_controller`) or a real kube-apiserver on loopback (`--kubeconfig`,
//! `real_kube.rs`, `real_cluster.rs`; the agent's own ClusterRole: `least_privilege.rs`).
//! `--upi`: the user made the addresses (`upi.rs`).
//!
//! The sequence, the report and the command line are here, once; what differs per cloud (the
//! fake's world, the CCM's configuration, what is left) is the cloud's [`CloudUnderTest`]
//! (`azure.rs`, `gcp.rs`). Not in CI with a CCM: it needs the CCM binary, which CI does not
//! build; CI runs `--simulated --upi` (`tests/real_ccm.rs`).

mod agent;
mod args;
mod azure;
mod gcp;
mod kube;
mod least_privilege;
mod observe;
mod real_cluster;
mod real_kube;
mod report;
mod upi;

pub use args::{Args, USAGE};
pub use report::{CallsPerService, NodeChange, Report};
pub use upi::UpiReport;

use agent::{AgentSetup, agent_step, log_file};
use anyhow::{Context, Result, bail};
use kube::Kube;
use serde_json::Value;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The CCM's cloud calls so far: all, and the mutating ones.
#[derive(Debug, Default, Clone, Copy)]
pub struct CallCount {
    pub all: usize,
    pub mutating: usize,
}

/// How the CCM is started: its arguments and the environment added to the harness's.
pub struct CcmCommand {
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
}

/// The cloud a harness run is about (afterburn's provider trait: the defaults fit a cloud
/// that has nothing special there).
pub(crate) trait CloudUnderTest {
    /// `gcp` or `azure`.
    fn name(&self) -> &'static str;
    /// The example asset dir the fake matches: the cloud's fixture.
    fn assets(&self) -> PathBuf {
        crate::peers::fixture(self.name())
    }
    /// The agent's environment for this cloud.
    fn agent_env(&self) -> Vec<(String, String)>;
    /// The counting proxies between the agent and the fake.
    fn agent_proxies(&self) -> Vec<&crate::proxy::Proxy>;
    /// Mutating calls the agent made since the last reset.
    fn agent_mutations(&self) -> usize {
        let proxies = self.agent_proxies();
        proxies.iter().map(|p| p.mutating_calls().len()).sum()
    }
    fn reset_agent_counts(&self) {
        self.agent_proxies().iter().for_each(|p| p.reset());
    }
    /// The counting proxy between the CCM and the fake.
    fn ccm_proxy(&self) -> &crate::proxy::Proxy;
    /// Whether a call through it counts as the CCM's work on our Services (not, e.g., a
    /// read of the cloud's endpoints at start-up).
    fn counts(&self, _call: &crate::proxy::Call) -> bool {
        true
    }
    /// The CCM's cloud calls since it started.
    fn ccm_calls(&self) -> CallCount {
        let calls: Vec<_> = self
            .ccm_proxy()
            .calls()
            .into_iter()
            .filter(|c| self.counts(c))
            .collect();
        CallCount {
            all: calls.len(),
            mutating: calls.iter().filter(|c| c.mutating).count(),
        }
    }
    /// When a load balancer first served `ip` on `port`.
    fn serving_since(&self, ip: IpAddr, port: u16) -> Option<Instant>;
    /// Per reserved IP: from its load balancer serving to the IP joining DNS (negative:
    /// before), where the fake can tell when a record was added.
    fn gate_lag_per_ip(&self) -> Vec<(String, i64)> {
        Vec::new()
    }
    /// What is left of the agent's resources.
    fn left_ours(&self) -> Vec<String>;
    /// What is left of the CCM's resources.
    fn left_ccm(&self) -> Vec<String>;
    /// The cluster's Nodes, each with its instance's providerID, Ready.
    fn nodes(&self) -> Vec<Value>;
    /// What the local API server's simulated controllers know of the cloud (their load
    /// balancer controller switched off when `external_controller`).
    fn local_kube_options(&self, external_controller: bool) -> crate::kube::KubeSimOptions;
    /// The CCM's arguments and environment, pointed at the fake and at `kubeconfig`.
    fn ccm_command(&self, kubeconfig: &Path, work: &Path) -> Result<CcmCommand>;
    /// Whether the CCM has started (made its first cloud call after start-up).
    fn ccm_started(&self) -> bool {
        true
    }
    /// Whether the node change is made with the simulated controller too (where the fake
    /// records what that controller built); else only with a real CCM.
    fn node_change_simulated(&self) -> bool {
        false
    }
    /// A fourth Node (and its instance) comes: how long until the controller put it in the
    /// load balancers' backends (None: not measured for this cloud, or not within `limit`).
    async fn add_a_node(&self, _kube: &Kube, _limit: Duration) -> Result<Option<NodeChange>> {
        Ok(None)
    }
    /// `--upi`: the user makes the addresses the Services will hold, by the seed's names,
    /// before the install (`work`: where a file of theirs goes). The agent's added
    /// environment (Azure: `BOOTSTRAP_AGENT_RESERVATIONS` naming the private IP), and what
    /// the user named without a resource.
    async fn make_user_addresses(&self, work: &Path) -> Result<UserMade>;
    /// The user's addresses as the cloud's API shows them now (a name missing: gone).
    fn user_addresses(&self) -> upi::UserAddresses;
}

/// What `make_user_addresses` leaves for the agent and the report.
pub struct UserMade {
    pub agent_env: Vec<(String, String)>,
    /// What the user named without a resource: a line each, and its IP.
    pub named_only: Vec<(String, String)>,
}

/// How long the node change waits for the simulated controller: in process, it reacts within
/// milliseconds of the Node or not at all (the real CCMs took under 2 s).
const SIMULATED_NODE_LIMIT: Duration = Duration::from_secs(5);

/// Runs `real-ccm`; the exit code: 0 when the run is done and printed (whatever it found), 2
/// for a bad command line or a missing CCM binary (with where to get it).
pub async fn command(args: &[&str]) -> Result<i32> {
    let args = match Args::parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(2);
        }
    };
    if let Some(missing) = args.missing_ccm() {
        eprintln!("error: {missing}");
        return Ok(2);
    }
    let agent = std::env::current_exe()?.with_file_name("bootstrap-agent");
    if !agent.exists() {
        bail!(
            "{} not found; build it first: cargo build --all-features --workspace --bins",
            agent.display()
        );
    }
    let work = crate::venv::target_dir().join(format!("real-ccm-{}", args.cloud));
    let report = harness(&args, &agent, &work).await?;
    let json = report.to_json();
    std::fs::write(
        work.join("report.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        for (k, v) in json.as_object().into_iter().flatten() {
            println!("{k}: {v}");
        }
    }
    Ok(0)
}

/// The whole sequence of `args` with the agent binary `agent`, its files (logs, state, the
/// CCM's config, `report.json`) in `work` (emptied first).
pub async fn harness(args: &Args, agent: &Path, work: &Path) -> Result<Report> {
    let _ = std::fs::remove_dir_all(work);
    std::fs::create_dir_all(work).with_context(|| format!("cannot create {}", work.display()))?;
    match args.cloud.as_str() {
        "azure" => sequence(&azure::Azure::start().await?, args, agent, work).await,
        "gcp" => sequence(&gcp::Gcp::start().await?, args, agent, work).await,
        other => bail!("unknown cloud {other:?}"),
    }
}

/// The CCM process, killed when dropped; its output in `<work>/ccm.log`.
fn start_ccm(
    ccm: &Path,
    cloud: &impl CloudUnderTest,
    kube: &Kube,
    work: &Path,
) -> Result<tokio::process::Child> {
    let CcmCommand { mut args, env } = cloud.ccm_command(kube.kubeconfig_path(), work)?;
    // JSON is for the local API server, which speaks no protobuf; a real one gets the CCM's
    // default (protobuf), as in a cluster.
    if matches!(kube, Kube::Real(_)) {
        args.retain(|a| !a.starts_with("--kube-api-content-type="));
    }
    tokio::process::Command::new(ccm)
        .args(args)
        .envs(env)
        // No cloud identity from this environment: the fake's is in the cloud config.
        .env_remove("AZURE_CLIENT_ID")
        .env_remove("AZURE_CLIENT_SECRET")
        .env_remove("AZURE_TENANT_ID")
        .env_remove("AZURE_ENVIRONMENT_FILEPATH")
        .env_remove("GOOGLE_APPLICATION_CREDENTIALS")
        // A guard: any HTTP(S) dial off loopback goes to a closed loopback port and fails
        // (Go never proxies loopback addresses).
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("HTTP_PROXY", "http://127.0.0.1:9")
        .env("NO_PROXY", "127.0.0.1,localhost")
        .stdout(log_file(work, "ccm.stdout")?)
        .stderr(log_file(work, "ccm.log")?)
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("cannot start {}", ccm.display()))
}

/// The API server of the run: the local one with the cloud's Nodes.
async fn api_server(cloud: &impl CloudUnderTest, args: &Args) -> Result<Kube> {
    if let Some(kubeconfig) = &args.kubeconfig {
        let kube = real_kube::RealKube::open(kubeconfig)?;
        real_cluster::prepare(&kube, cloud.nodes())
            .await
            .with_context(|| format!("cannot prepare the cluster of {}", kubeconfig.display()))?;
        return Ok(Kube::Real(kube));
    }
    let mut options = cloud.local_kube_options(args.ccm.is_some());
    options.objects.extend(cloud.nodes());
    Ok(Kube::Local(crate::kube::KubeSim::start(options).await?))
}

/// Waits until `done` holds, at most `limit` (the CCM's start shows in the fake, where
/// nothing can be watched).
async fn until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    done()
}

/// `run`, a second `run`, a node change (where the cloud measures it), `teardown --all`, and
/// what each showed.
async fn sequence(
    cloud: &impl CloudUnderTest,
    args: &Args,
    agent: &Path,
    work: &Path,
) -> Result<Report> {
    let started_at = std::time::SystemTime::now();
    // UPI: the user's addresses come first, before anything of the install.
    let user = match args.upi {
        true => Some(cloud.make_user_addresses(work).await?),
        false => None,
    };
    let mut setup = AgentSetup {
        env: user
            .as_ref()
            .map(|u| u.agent_env.clone())
            .unwrap_or_default(),
        kubeconfig: None,
    };
    let user_before = cloud.user_addresses();
    let kube = api_server(cloud, args).await?;
    if let (Kube::Real(real), true) = (&kube, args.least_privilege) {
        let assets = cloud.assets();
        let own = least_privilege::agent_kubeconfig(real, agent, &assets, work).await?;
        setup.kubeconfig = Some(own);
    }
    let mut ccm_process = match &args.ccm {
        Some(ccm) => Some(start_ccm(ccm, cloud, &kube, work)?),
        None => None,
    };
    if ccm_process.is_some() && !until(Duration::from_secs(60), || cloud.ccm_started()).await {
        bail!(
            "the CCM did not start within a minute; see {}",
            work.join("ccm.log").display()
        );
    }
    let baseline = cloud.ccm_calls();
    let gate = observe::gate_watch(&kube).await?;
    let ingress = observe::ingress_watch(&kube).await?;
    let (kube_ref, setup) = (&kube, &setup);
    let step = move |step: &'static [&'static str], log: &'static str| {
        agent_step(agent, step, log, cloud, kube_ref, work, setup)
    };
    let run_exit = step(&["run"], "agent-run.log").await?;
    let gate_at = if gate.is_finished() {
        gate.await.ok().flatten()
    } else {
        gate.abort();
        None
    };
    let services = observe::our_services(&kube).await?;
    let count = services.len().max(1) as f64;
    let served = observe::all_served_at(cloud, &services);
    let ingress_at = {
        let seen = ingress.lock().unwrap_or_else(|p| p.into_inner());
        services
            .iter()
            .map(|s| seen.get(&(s.namespace.clone(), s.name.clone())).copied())
            .collect::<Option<Vec<Instant>>>()
            .and_then(|all| all.into_iter().max())
    };
    let after_run = cloud.ccm_calls();
    // Read now: the fake's serving times go with the load balancers at teardown.
    let gate_lag_ms_per_ip = cloud.gate_lag_per_ip();
    let built_ccm = cloud.left_ccm();
    let finalizers_after_run = services
        .iter()
        .map(|s| format!("{}/{}: {}", s.namespace, s.name, s.finalizers))
        .collect();

    cloud.reset_agent_counts();
    let second_run_exit = step(&["run"], "agent-second-run.log").await?;
    let second_run_mutations = cloud.agent_mutations();
    let after_second = cloud.ccm_calls();
    // The simulated GCE controller records `UpdatedLoadBalancer` as the real one does.
    let node_limit = match (&args.ccm, cloud.node_change_simulated()) {
        (Some(_), _) => Some(Duration::from_secs(60)),
        (None, true) => Some(SIMULATED_NODE_LIMIT),
        (None, false) => None,
    };
    let node_change = match node_limit {
        Some(limit) => {
            let updated = observe::all_updated(&kube, &services, limit).await?;
            let change = cloud.add_a_node(&kube, limit).await?;
            // Its calls end with the last Service's sync, which may come after the
            // backends hold the node (a Service whose backends held it already).
            if change.as_ref().is_some_and(|c| c.in_backends_ms.is_some()) {
                let _ = updated.await;
            } else {
                updated.abort();
            }
            change
        }
        None => None,
    };
    let after_node = cloud.ccm_calls();
    let events = observe::ccm_events(&kube, started_at).await?;

    let started = Instant::now();
    let teardown_exit = step(&["teardown", "--all"], "agent-teardown.log").await?;
    let teardown_ms = started.elapsed().as_millis();
    observe::settle(&kube, cloud).await;
    let after_teardown = cloud.ccm_calls();
    let upi = user.map(|made| {
        let mut user_ips: Vec<String> = user_before.values().filter_map(upi::address_ip).collect();
        user_ips.extend(made.named_only.iter().map(|(_, ip)| ip.clone()));
        let services_on_user_ips = services
            .iter()
            .flat_map(|s| s.ips.iter().map(move |ip| (s, ip.to_string())))
            .filter(|(_, ip)| user_ips.contains(ip))
            .map(|(s, ip)| format!("{}/{} {ip}", s.namespace, s.name))
            .collect();
        UpiReport {
            before: user_before,
            after: cloud.user_addresses(),
            named_only: made.named_only.into_iter().map(|(line, _)| line).collect(),
            user_ips,
            services_on_user_ips,
        }
    });
    if let Some(log) = kube.request_log() {
        let lines: Vec<String> = log.iter().map(|(m, p)| format!("{m} {p}")).collect();
        std::fs::write(work.join("kube-requests.log"), lines.join("\n"))?;
    }
    let mut events = events;
    if let Some(process) = ccm_process.as_mut() {
        if !matches!(process.try_wait(), Ok(None)) {
            events.push(format!(
                "the CCM exited during the run; see {}",
                work.join("ccm.log").display()
            ));
        }
        let _ = process.start_kill();
        let _ = process.wait().await;
    }
    kube.finish()
        .await
        .context("cannot remove the harness's objects from the API server")?;
    let per_service = |from: CallCount, to: CallCount| (to.all - from.all) as f64 / count;
    Ok(Report {
        cloud: cloud.name().into(),
        kube: kube.kind().into(),
        controller: if args.ccm.is_some() {
            "real-ccm"
        } else {
            "simulated"
        }
        .into(),
        run_exit,
        second_run_exit,
        second_run_mutations,
        teardown_exit,
        left_ours: cloud.left_ours(),
        left_ccm: cloud.left_ccm(),
        built_ccm,
        events,
        gate_lag_ms: gate_at
            .zip(served)
            .map(|(gate, served)| observe::signed_ms(served, gate)),
        gate_lag_ms_per_ip,
        gate_after_ingress_ms: gate_at
            .zip(ingress_at)
            .map(|(gate, ingress)| observe::signed_ms(ingress, gate)),
        node_change,
        calls_per_service: CallsPerService {
            run: per_service(baseline, after_run),
            run_mutating: (after_run.mutating - baseline.mutating) as f64 / count,
            second_run: per_service(after_run, after_second),
            node_added: per_service(after_second, after_node),
            teardown: per_service(after_node, after_teardown),
        },
        teardown_ms,
        finalizers_after_run,
        least_privilege: setup.kubeconfig.is_some(),
        upi,
    })
}
