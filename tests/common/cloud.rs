//! One trait for the per-cloud peers, so that a behaviour test is written once and run on
//! every cloud: [`Cloud`] starts a cloud's peers with the agent on its main fixture, gives the
//! agent's environment, inspects what exists ([`CloudWorld`]), plays another writer and
//! another owner, and counts the agent's mutating calls. [`Harness`] pairs the peers with the
//! [`Agent`] binary. The per-cloud files (`aws.rs`, `gcp.rs`, `azure.rs`) implement the trait;
//! the shared bodies live in `suite.rs`.

use super::agent::{API, API_INT, Agent, BOOTSTRAP};
use bootstrap_sim::{FaultStats, Faults, Hold, Proxy};
use serde_json::Value;

/// A cloud's local peers (emulators or fakes behind counting proxies).
#[allow(async_fn_in_trait)]
pub trait Cloud: Sized + Send + Sync + 'static {
    /// What exists in the cloud, as the shared tests read it.
    type World: CloudWorld;
    /// The cloud's name: its fixture and template directory, and the label of what tests print.
    const NAME: &'static str;
    /// The bootstrap host's IP in the main fixture.
    const BOOTSTRAP_IP: &'static str;
    /// Another address of the bootstrap host's subnet (an operator's typo).
    const OTHER_BOOTSTRAP_IP: &'static str;
    /// Whether the agent gives the bootstrap host a second address (GCP's alias IP, Azure's
    /// secondary IP configuration; never on AWS), in `api-int` until stage 3.
    const SECOND_ADDRESS: bool;
    /// The seeded `api-int` holds the second address without the bootstrap IP (Azure, issue
    /// 42); elsewhere both.
    const API_INT_WITHOUT_BOOTSTRAP_IP: bool;
    /// In `reserve` on a fresh world, the mutating call on the addresses' proxy (counted from
    /// 1) that adds the bootstrap host's second address; None where it has none.
    const SECOND_ADDRESS_MUTATION: Option<usize>;
    /// The changes `plan` lists on a fresh world.
    const PLANNED_CHANGES: usize;
    /// A fresh `reserve` + `dns seed`'s mutating calls, as [`Cloud::calls`] names them.
    const BOOTSTRAP_CALLS: &'static [&'static str];
    /// `dns teardown`'s mutating calls after a bootstrap.
    const DNS_TEARDOWN_CALLS: &'static [&'static str];
    /// The secrets of the main fixture (and what the agent makes of them), as (text, what it
    /// is): none may ever be printed.
    const FIXTURE_SECRETS: &'static [(&'static str, &'static str)];
    /// Names of what [`Cloud::create_foreign`] makes: no mutating call may name one.
    const FOREIGN_NAMES: &'static [&'static str];

    /// Fresh peers, and the agent on the cloud's main fixture.
    async fn start() -> Harness<Self>;
    /// What exists now.
    async fn world(&self) -> Self::World;
    /// Another writer sets the A record set `fqdn` of the cluster's private (or the public)
    /// zone to exactly `values`.
    async fn write_record(&self, private: bool, fqdn: &str, values: &[&str]);
    /// Another writer creates the CNAME record set `fqdn` -> `target` in the cluster's
    /// private (or the public) zone.
    async fn write_cname(&self, private: bool, fqdn: &str, target: &str);
    /// Reservations that are not ours: untagged, another cluster's, ours by cluster tag only.
    async fn create_foreign(&self);
    /// As the user (UPI), with the official client: the public reservation(s) of the cluster
    /// by the seed's names, for the agent to adopt. Their IPs.
    async fn create_user_public(&self) -> Vec<String>;
    /// The agent's environment: the peers' endpoints and no ambient credentials.
    fn agent_env(&self) -> Vec<(String, String)>;
    /// Mutating calls since the last reset, as the proxies saw them.
    fn mutating_calls(&self) -> Vec<String>;
    /// One mutating call named by its operation (ids and generated names left out).
    fn normalize_call(call: &str) -> String;
    /// [`Cloud::mutating_calls`] named by operation, sorted.
    fn calls(&self) -> Vec<String> {
        let mut calls: Vec<String> = self
            .mutating_calls()
            .iter()
            .map(|c| Self::normalize_call(c))
            .collect();
        calls.sort();
        calls
    }
    fn reset_counts(&self);
    fn inject_faults(&self, faults: &Faults);
    fn stop_faults(&self);
    fn fault_stats(&self) -> FaultStats;
    /// The proxies in front of the cloud's DNS and of its addresses (one and the same where
    /// one API carries both), where a test freezes the agent.
    fn dns_and_address_proxies(&self) -> (&Proxy, &Proxy);
    /// What the local API server's load-balancer controllers know of this cloud (they claim
    /// and use its addresses as the real ones do).
    fn lb_cloud(&self) -> bootstrap_sim::kube::CloudOptions;
    /// After commands under faults: nothing was created twice and cleaned up afterwards (on
    /// AWS: no EIP ever released). Clouds whose creates are idempotent have nothing to check.
    fn assert_nothing_made_twice(&self) {}
    /// After a step stopped at its deadline with every call throttled: what `status` (JSON)
    /// counts. Only AWS checks it: `status` counts the runner's retries of a stage, and the AWS
    /// SDK's bounded retries (5 attempts, about 3 s) give up well within the 8 s deadline.
    fn assert_throttling_counted(_status: &Value) {}
}

/// The [`Cloud`] methods that each cloud's peers have under the same name (the counting
/// proxies and fault injection of `bootstrap_sim`): `forward_to_peers!(AwsPeers);` in the
/// `impl Cloud`.
macro_rules! forward_to_peers {
    ($peers:ty) => {
        fn agent_env(&self) -> Vec<(String, String)> {
            <$peers>::agent_env(self)
        }

        fn mutating_calls(&self) -> Vec<String> {
            <$peers>::mutating_calls(self)
        }

        fn reset_counts(&self) {
            <$peers>::reset_counts(self);
        }

        fn inject_faults(&self, faults: &bootstrap_sim::Faults) {
            <$peers>::inject_faults(self, faults);
        }

        fn stop_faults(&self) {
            <$peers>::stop_faults(self);
        }

        fn fault_stats(&self) -> bootstrap_sim::FaultStats {
            <$peers>::fault_stats(self)
        }

        fn lb_cloud(&self) -> bootstrap_sim::kube::CloudOptions {
            <$peers>::lb_cloud(self)
        }
    };
}
pub(crate) use forward_to_peers;

/// The resources of the JSON array `list` that carry both of our markers in their `markers`
/// object (tags or labels): a reservation key under `reservation`, and `owned` under `cluster`.
pub fn ours_in<'a>(
    list: &'a Value,
    markers: &str,
    reservation: &str,
    cluster: &str,
) -> Vec<&'a Value> {
    list.as_array()
        .unwrap()
        .iter()
        .filter(|r| r[markers][reservation].is_string())
        .filter(|r| r[markers][cluster] == "owned")
        .collect()
}

/// The `ip` of each of `resources`, sorted.
pub fn ips_of(resources: &[&Value]) -> Vec<String> {
    let mut ips: Vec<String> = resources
        .iter()
        .map(|r| r["ip"].as_str().unwrap().to_string())
        .collect();
    ips.sort();
    ips
}

/// A cloud whose installer makes the network, by default names, when the install-config names
/// none (the fakes then know only the installer's network).
#[allow(async_fn_in_trait)]
pub trait InstallerNetwork: Cloud {
    /// What `plan` says of each default name it uses.
    const DEFAULT_NAMES: &'static [&'static str];
    /// What `reserve` prints when the cloud answers a bring-your-own name on the installer's
    /// network.
    const BRING_YOUR_OWN_REFUSAL: &'static str;
    /// Peers that know only the installer's network, and the agent on `fixture`.
    async fn start_on_installer_network(fixture: &str) -> Harness<Self>;
}

/// What exists in one cloud, read the same way on every cloud.
pub trait CloudWorld {
    /// The peers' own answer, for failure messages.
    fn raw(&self) -> &Value;
    /// How many reservations of ours exist (cloud resources or recorded private IPs).
    fn our_count(&self) -> usize;
    /// Our reserved private IPs, sorted.
    fn reserved_private(&self) -> Vec<String>;
    /// Our reserved public IPs, sorted.
    fn reserved_public(&self) -> Vec<String>;
    /// The values of record set `name` ("fqdn TYPE") in the `private` or `public` zone, sorted.
    fn values(&self, zone: &str, name: &str) -> Vec<String>;
    /// Everything that is not ours (reservations and tags), to compare before and after.
    fn foreign(&self) -> Value;
    /// The stage-1 picture: exactly the planned reservations, and the records with the
    /// reserved IPs, the bootstrap IP and `extra_private` (another writer's values).
    fn assert_seeded(&self, extra_private: &[&str]);
    /// After an interrupted bootstrap: at most the planned reservations of each kind.
    fn assert_at_most_planned(&self);

    /// The addresses the cloud shows on the bootstrap host besides its own IP, sorted (GCP:
    /// nic0's alias IPs of the VM `<infra-id>-bootstrap`; Azure: the secondary IP
    /// configurations of `<infra-id>-bootstrap-nic`; AWS: none modelled). More than one is a
    /// duplicate.
    fn bootstrap_host_extra_addresses(&self) -> Vec<String>;

    /// The bootstrap host's second address as the cloud shows it on the host; None when it
    /// has none. Fails on more than one (a duplicate).
    fn second_address(&self) -> Option<String> {
        let extra = self.bootstrap_host_extra_addresses();
        assert!(
            extra.len() <= 1,
            "at most one second address on the bootstrap host: {extra:?}\n{:#}",
            self.raw()
        );
        extra.into_iter().next()
    }

    /// Whether the seeded private `api-int` leaves the bootstrap IP out: on Azure while the
    /// bootstrap host has its second address (issue 42: the masters' watcher takes every
    /// api-int address for a VIP, and azure-routes redirects each to the master itself).
    fn api_int_without_bootstrap_ip(&self) -> bool {
        false
    }

    /// The bootstrap host's addresses the seeded private record `name` holds: the bootstrap
    /// IP (not in Azure's `api-int` while the host has a second address) and that second
    /// address.
    fn bootstrap_host_values(&self, bootstrap_ip: &str, name: &str) -> Vec<String> {
        let without = name == API_INT && self.api_int_without_bootstrap_ip();
        (!without)
            .then(|| bootstrap_ip.to_string())
            .into_iter()
            .chain(self.second_address())
            .collect()
    }

    /// The private `api` and `api-int` hold exactly `reserved`, the bootstrap host's
    /// addresses ([`Self::bootstrap_host_values`]) and `extra_private` (another writer's
    /// values).
    fn assert_private_records(
        &self,
        reserved: &[String],
        bootstrap_ip: &str,
        extra_private: &[&str],
    ) {
        for name in [API, API_INT] {
            let mut expected: Vec<String> = reserved.to_vec();
            expected.extend(self.bootstrap_host_values(bootstrap_ip, name));
            expected.extend(extra_private.iter().map(|s| s.to_string()));
            expected.sort();
            assert_eq!(self.values("private", name), expected, "private {name}");
        }
    }
}

/// A cloud's peers and the agent run against them; dereferences to the [`Agent`] (so
/// `h.run(..)`, `h.extra`, `h.state` work on the harness).
pub struct Harness<P> {
    pub peers: P,
    pub agent: Agent,
}

impl<P> std::ops::Deref for Harness<P> {
    type Target = Agent;
    fn deref(&self) -> &Agent {
        &self.agent
    }
}

impl<P> std::ops::DerefMut for Harness<P> {
    fn deref_mut(&mut self) -> &mut Agent {
        &mut self.agent
    }
}

impl<P: Cloud> Harness<P> {
    /// What exists now.
    pub async fn world(&self) -> P::World {
        self.peers.world().await
    }

    /// Resets the cloud call counts, runs `commands` in order and asserts they made no
    /// mutating cloud call (`why` says what that proves). The last command's output.
    pub async fn assert_changes_nothing(
        &self,
        commands: &[&[&str]],
        why: &str,
    ) -> std::process::Output {
        self.peers.reset_counts();
        let mut last = None;
        for args in commands {
            last = Some(self.run(args).await);
        }
        let calls = self.peers.mutating_calls();
        assert!(calls.is_empty(), "{why}: {calls:?}");
        last.expect("at least one command")
    }

    /// Starts `args`, waits until the DNS (`dns`) or the addresses' proxy froze it at `hold`,
    /// SIGKILLs it.
    pub async fn kill_in(&self, args: &[&str], dns: bool, hold: Hold) {
        let (dns_proxy, address_proxy) = self.peers.dns_and_address_proxies();
        let proxy = if dns { dns_proxy } else { address_proxy };
        self.agent.kill_at(args, proxy, hold).await;
    }

    /// [`Harness::kill_in`] for `args` as an admin runs them ([`Agent::admin_command`]).
    pub async fn admin_kill_in(
        &self,
        args: &[&str],
        state: Option<&std::path::Path>,
        dns: bool,
        hold: Hold,
    ) {
        let (dns_proxy, address_proxy) = self.peers.dns_and_address_proxies();
        let proxy = if dns { dns_proxy } else { address_proxy };
        self.peers.reset_counts();
        Agent::kill_command_at(self.agent.admin_command(args, state), proxy, hold).await;
    }

    /// No mutating call names any of `markers` (operations or resource paths).
    pub fn assert_no_mutating_call_naming(&self, markers: &[&str]) {
        let calls: Vec<String> = self
            .peers
            .mutating_calls()
            .into_iter()
            .filter(|c| markers.iter().any(|m| c.contains(m)))
            .collect();
        assert!(calls.is_empty(), "{calls:?}");
    }

    /// `preflight --output json` with `flags`, without the run flags (no kubeconfig: the
    /// cloud's lines): (exit code, report, stderr).
    pub async fn preflight_json(&mut self, flags: &[&str]) -> (Option<i32>, Value, String) {
        let run_flags = std::mem::take(&mut self.agent.extra);
        let args: Vec<&str> = ["preflight", "--output", "json"]
            .iter()
            .chain(flags)
            .copied()
            .collect();
        let out = self.command(&args).output().await.unwrap();
        self.agent.extra = run_flags;
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let report = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!("{e}: {stderr}");
        });
        (out.status.code(), report, stderr)
    }

    /// `run` stops at the checklist with each of `failed` among its FAIL lines: exit 2, no
    /// mutating call, no journal.
    pub async fn assert_run_refused_by_preflight(&self, failed: &[&str]) {
        self.peers.reset_counts();
        let out = self.command(&["run"]).output().await.unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        for name in failed {
            assert!(
                stderr.contains(&format!("FAIL  {name}")),
                "{name}: {stderr}"
            );
        }
        let calls = self.peers.mutating_calls();
        assert!(calls.is_empty(), "{calls:?}");
        assert!(!self.state.join("journal.json").exists(), "nothing written");
    }

    /// After a successful bootstrap: a second one and `plan` make no mutating call, and
    /// `plan` says so.
    pub async fn assert_bootstrap_converged(&self) {
        self.assert_changes_nothing(BOOTSTRAP, "a second bootstrap changes nothing")
            .await;
        let plan = self
            .assert_changes_nothing(
                &[&["plan", "--stage", "reserve,seed-dns"]],
                "plan changes nothing",
            )
            .await;
        assert!(String::from_utf8_lossy(&plan.stdout).contains("no changes"));
    }
}
