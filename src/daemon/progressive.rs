//! Progressive DNS and the gate step: the private records hold the bootstrap IP first, and
//! each reserved IP joins once the gate proves its load balancer serves it.

use crate::assets::ClusterSpec;
use crate::cluster::gate;
use crate::journal::Journal;
use crate::notify;
use crate::plan::Step;
use crate::providers::Providers;
use crate::render;
use crate::runner::Runner;
use anyhow::Result;
use std::collections::BTreeSet;
use std::net::IpAddr;

/// How the reserved IPs get into DNS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DnsSeeding {
    /// The bootstrap IP first; each reserved IP once its load balancer serves it (the gate's
    /// proof for every Service that claims it).
    Progressive,
    /// Every reserved IP with the bootstrap IP at once, as the seed does: clients meet dead
    /// addresses until the load balancers exist.
    AllAtOnce,
}

impl DnsSeeding {
    /// `plan` of a `run` that has not seeded DNS yet: what the seed will add in this mode
    /// (progressive: the IPs that serve, none yet, so the bootstrap IP alone), and the note
    /// that says so.
    pub fn plan_as_run(self, observed: &mut crate::plan::Observed) -> String {
        match self {
            DnsSeeding::Progressive => {
                observed.serving.get_or_insert_with(BTreeSet::new);
                "dns seeding: progressive: the records start with the bootstrap IP alone; each \
                 reserved IP joins them once its load balancer serves it (the gate and the proof \
                 on the wire), the public `api` record with its first one \
                 (--dns-seeding all-at-once adds them all now)"
                    .to_string()
            }
            DnsSeeding::AllAtOnce => {
                observed.serving = None;
                "dns seeding: all at once: the reserved IPs go into the records with the \
                 bootstrap IP, before any load balancer serves them"
                    .to_string()
            }
        }
    }
}

/// What the gate needs of the command that runs it (`run`, `publish`).
pub struct GateSettings<'a> {
    pub step_timeout: std::time::Duration,
    pub gate_timeout: std::time::Duration,
    /// The proof on the wire (None: `--wire-proof off`).
    pub wire: Option<&'a crate::cluster::wire::WireProof>,
}

/// PURE: the claimed IPs whose every claiming Service is ready (its load balancer holds them
/// and it has a ready endpoint).
pub fn serving_ips(
    targets: &[render::ServiceClaim],
    services: &[gate::ServiceGate],
) -> BTreeSet<IpAddr> {
    let ready = |t: &render::ServiceClaim| {
        services
            .iter()
            .any(|s| s.namespace == t.namespace && s.name == t.name && s.ready)
    };
    targets
        .iter()
        .flat_map(|t| t.claims.iter())
        .filter(|ip| targets.iter().filter(|t| t.claims.contains(ip)).all(&ready))
        .copied()
        .collect()
}

/// PURE: whether another claimed IP is moments from serving: not served yet, but every
/// Service claiming it has its load balancer (an ingress); only its endpoints or its proof are
/// missing. Then served IPs wait [`JOIN_SETTLE`] to join with it; otherwise (a controller that
/// builds one Service after the other, seconds apart) they join at once.
pub fn more_coming(
    targets: &[render::ServiceClaim],
    services: &[gate::ServiceGate],
    served: &BTreeSet<IpAddr>,
) -> bool {
    let has_ingress = |t: &render::ServiceClaim| {
        services
            .iter()
            .any(|s| s.namespace == t.namespace && s.name == t.name && !s.ingress.is_empty())
    };
    targets
        .iter()
        .flat_map(|t| t.claims.iter())
        .filter(|ip| !served.contains(ip))
        .any(|ip| {
            targets
                .iter()
                .filter(|t| t.claims.contains(ip))
                .all(&has_ingress)
        })
}

/// Progressive DNS: records `ips` as served (journaled first) and runs the seed again, which
/// adds what the records lack: exactly the newly served IPs, or after a crash whatever the
/// journal says serves but DNS does not hold yet. Without new IPs it runs only when `whole`
/// (the seed observes first, so it changes nothing when all is in place). A no-op in
/// all-at-once mode.
pub(super) async fn join_dns(
    spec: &ClusterSpec,
    journal: &mut Journal,
    providers: &Providers,
    settings: &GateSettings<'_>,
    ips: BTreeSet<IpAddr>,
    whole: bool,
) -> Result<()> {
    let Some(serving) = journal.state.serving.as_mut() else {
        return Ok(());
    };
    let new: Vec<String> = ips.difference(serving).map(ToString::to_string).collect();
    if new.is_empty() && !whole {
        return Ok(());
    }
    if !new.is_empty() {
        serving.extend(ips.iter().copied());
        journal.save()?;
        tracing::info!(ips = ?new, "load balancer serves: joining DNS");
        notify::status(&format!(
            "stage 2: adding {} to DNS (its load balancer serves it)",
            new.join(", ")
        ));
    }
    Runner {
        spec,
        journal,
        providers,
        kube: None,
        step_timeout: settings.step_timeout,
    }
    .run(Step::SeedDns)
    .await?;
    Ok(())
}

/// How long the gate gathers served IPs before they join DNS, unless all claimed IPs serve
/// sooner or no other is about to ([`more_coming`]). Services applied together come up moments apart, and each join waits until its
/// changes propagated (Route53 "generally within 60 seconds"): one join for all of them is
/// one wait on the critical path instead of one per Service (issue 27).
const JOIN_SETTLE: std::time::Duration = std::time::Duration::from_secs(1);

/// Progressive DNS: before the seed, journal which mode this `run` seeds in. The served IPs
/// are kept across restarts; switching to all-at-once lets every IP join now.
pub fn choose(journal: &mut Journal, seeding: DnsSeeding) -> Result<()> {
    journal.state.serving = match seeding {
        DnsSeeding::Progressive => Some(journal.state.serving.take().unwrap_or_default()),
        DnsSeeding::AllAtOnce => None,
    };
    journal.save()
}

/// The gate step: waits until every applied Service is ready while each IP the gate proves
/// served joins DNS at once; its report (`run` journals it and signals `gate-passed`).
pub async fn gate(
    spec: &ClusterSpec,
    journal: &mut Journal,
    providers: &Providers,
    settings: &GateSettings<'_>,
    kube: &kube::Client,
) -> Result<gate::GateReport> {
    let targets = journal.state.services.clone();
    let mut seen: Vec<gate::ServiceGate> = Vec::new();
    let cloud = Some(providers.addresses.as_ref());
    // Resumed after a crash between journaling a join and making it: make it now.
    join_dns(spec, journal, providers, settings, Default::default(), true).await?;
    let (serves, mut served) = tokio::sync::mpsc::unbounded_channel();
    let progress = crate::progress::Progress::stderr();
    let gate = gate::wait_ready(kube, &targets, cloud, settings.gate_timeout, |services| {
        progress.update(crate::progress::gate_text(services));
        for s in services.iter().filter(|s| !seen.contains(s)) {
            tracing::info!(service = %format!("{}/{}", s.namespace, s.name), reason = %s.reason, "gate");
        }
        seen = services.to_vec();
        let waiting: Vec<String> = services
            .iter()
            .filter(|s| !s.ready)
            .map(|s| format!("{}: {}", s.name, s.reason))
            .collect();
        notify::status(&format!("stage 2: waiting for {}", waiting.join(", ")));
        let served = serving_ips(&targets, services);
        let coming = more_coming(&targets, services, &served);
        let _ = serves.send((served, coming));
    });
    tokio::pin!(gate);
    let claimed: BTreeSet<IpAddr> = targets
        .iter()
        .flat_map(|t| t.claims.iter().copied())
        .collect();
    // Served IPs not joined yet, and when to join them (see JOIN_SETTLE); a served IP whose
    // proof fails is looked at again on a short backoff, not only at the gate's next event.
    let mut pending: Option<(BTreeSet<IpAddr>, tokio::time::Instant)> = None;
    let mut retry = crate::cluster::wire::ProofRetry::default();
    let report = loop {
        let settle_at = pending.as_ref().map(|p| p.1);
        let settled = async move {
            match settle_at {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            outcome = &mut gate => break outcome?,
            Some((ips, coming)) = served.recv() => {
                let joined = journal.state.serving.clone().unwrap_or_default();
                if ips.is_subset(&joined) {
                    continue;
                }
                let at = pending.as_ref().map_or_else(|| tokio::time::Instant::now() + JOIN_SETTLE, |p| p.1);
                let now = !coming || ips.is_superset(&claimed);
                pending = Some((ips, at));
                if !now {
                    continue;
                }
            }
            () = settled => {}
        }
        if let Some((served, _)) = pending.take() {
            let ips = crate::cluster::wire::joinable(
                settings.wire,
                cloud,
                &targets,
                served.clone(),
                journal.state.serving.as_ref(),
            )
            .await;
            let unproven = !ips.is_superset(&served);
            join_dns(spec, journal, providers, settings, ips, false).await?;
            if unproven {
                let wait = retry.after_failure(crate::cluster::wire::jitter());
                pending = Some((served, tokio::time::Instant::now() + wait));
            } else {
                retry.reset();
            }
        }
    };
    // The last evaluation may have made the last IPs joinable; and whatever a crash
    // interrupted is made whole before the bootstrap IP may go.
    // The path a client takes must work too, before the bootstrap IP may go.
    crate::cluster::wire::hold_until_proven(
        settings.wire,
        cloud,
        &targets,
        settings.gate_timeout,
        |line| {
            progress.update(format!("proof on the wire: {line}"));
            tracing::info!("proof on the wire: {line}");
            notify::status(&format!("stage 2: proof on the wire: {line}"));
            journal.state.wire_proof = Some(line);
            let _ = journal.save();
        },
    )
    .await?;
    progress.finish();
    let all = serving_ips(&targets, &report.services);
    join_dns(spec, journal, providers, settings, all, true).await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// A Service of namespace `ns` claiming `ips`.
    fn claim(name: &str, ips: &[&str]) -> render::ServiceClaim {
        render::ServiceClaim {
            namespace: "ns".into(),
            name: name.into(),
            claims: ips.iter().map(|s| ip(s)).collect(),
            needs_aws_lb_controller: false,
            ports: Vec::new(),
        }
    }

    #[test]
    fn another_ip_is_coming_only_when_all_its_services_have_a_load_balancer() {
        let targets = [
            claim("external-lb", &["203.0.113.1"]),
            claim("internal-lb", &["10.0.1.5"]),
            claim("internal-lb-mcs", &["10.0.1.5"]),
        ];
        let with_ingress = |names: &[&str]| -> Vec<gate::ServiceGate> {
            ["external-lb", "internal-lb", "internal-lb-mcs"]
                .iter()
                .map(|n| gate::ServiceGate {
                    ingress: match names.contains(n) {
                        true => vec!["x".into()],
                        false => Vec::new(),
                    },
                    ..gate::ServiceGate::not_evaluated("ns", n)
                })
                .collect()
        };
        let external: BTreeSet<IpAddr> = [ip("203.0.113.1")].into();
        // A controller that builds one Service after the other: nothing else is coming.
        assert!(!more_coming(
            &targets,
            &with_ingress(&["external-lb"]),
            &external
        ));
        assert!(!more_coming(
            &targets,
            &with_ingress(&["external-lb", "internal-lb"]),
            &external
        ));
        // Both internal Services have their load balancer: the internal IP is moments away.
        let all = with_ingress(&["external-lb", "internal-lb", "internal-lb-mcs"]);
        assert!(more_coming(&targets, &all, &external));
        // Served already: nothing more to wait for.
        let both: BTreeSet<IpAddr> = [ip("203.0.113.1"), ip("10.0.1.5")].into();
        assert!(!more_coming(&targets, &all, &both));
        // A Service of another namespace does not count.
        let mut elsewhere = all.clone();
        elsewhere[2].namespace = "other".into();
        assert!(!more_coming(&targets, &elsewhere, &external));
    }

    #[test]
    fn an_ip_serves_once_every_service_that_claims_it_is_ready() {
        let gate = |name: &str, ready: bool| gate::ServiceGate {
            ready,
            ..gate::ServiceGate::not_evaluated("ns", name)
        };
        // The internal IP is shared by the API and MCS Services (Azure, GCP).
        let targets = [
            claim("external-lb", &["203.0.113.1"]),
            claim("internal-lb", &["10.0.1.5"]),
            claim("internal-lb-mcs", &["10.0.1.5"]),
        ];
        let serving = |ready: &[&str]| {
            let services: Vec<_> = ["external-lb", "internal-lb", "internal-lb-mcs"]
                .iter()
                .map(|n| gate(n, ready.contains(n)))
                .collect();
            serving_ips(&targets, &services)
        };
        assert!(serving(&[]).is_empty());
        assert_eq!(serving(&["external-lb"]), [ip("203.0.113.1")].into());
        assert!(
            serving(&["internal-lb"]).is_empty(),
            "MCS does not serve the shared IP yet"
        );
        assert_eq!(
            serving(&["internal-lb", "internal-lb-mcs"]),
            [ip("10.0.1.5")].into()
        );
    }
}

#[cfg(test)]
mod plan_tests {
    use super::DnsSeeding;
    use crate::plan::Observed;

    #[test]
    fn plan_seeds_as_run_will() {
        let mut observed = Observed::default();
        let note = DnsSeeding::Progressive.plan_as_run(&mut observed);
        assert_eq!(observed.serving, Some(Default::default()));
        assert!(note.starts_with("dns seeding: progressive"), "{note}");
        let note = DnsSeeding::AllAtOnce.plan_as_run(&mut observed);
        assert_eq!(observed.serving, None);
        assert!(note.starts_with("dns seeding: all at once"), "{note}");
    }
}
