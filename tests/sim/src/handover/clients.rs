//! The simulated API clients: each resolves its record through a caching resolver (answers
//! kept for the record's TTL, each client with its own phase), sends one request every
//! period, and picks addresses by its policy.

use super::network::Network;
use crate::rng::Rng;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt;
use tokio::sync::watch;
use tokio::time::Instant;

/// How a client picks among the addresses of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Policy {
    /// Every address in order, each with the connect timeout (Go's dialer).
    EveryAddress,
    /// The first address only.
    FirstAddress,
    /// One address at random.
    RandomAddress,
}

impl Policy {
    pub const ALL: [Policy; 3] = [
        Policy::EveryAddress,
        Policy::FirstAddress,
        Policy::RandomAddress,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Policy::EveryAddress => "every-address",
            Policy::FirstAddress => "first-address",
            Policy::RandomAddress => "random-address",
        }
    }
}

/// One request's outcome, at the time it started.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub policy: Policy,
    /// A client of the public `api` record (else of the private `api-int`).
    pub public: bool,
    /// The client had an address to call (false: its resolver found no record).
    pub resolved: bool,
    pub started: Instant,
    pub latency: Duration,
    pub ok: bool,
}

pub struct Client {
    pub policy: Policy,
    /// Resolves the public `api` record (else the private `api-int`).
    pub public: bool,
    /// The record's values as the zone holds them now (empty: the record does not exist).
    pub zone: watch::Receiver<Vec<IpAddr>>,
    pub ttl: Duration,
    pub period: Duration,
    pub connect_timeout: Duration,
    pub seed: u64,
}

impl Client {
    /// Sends requests until `stop`; the client starts once its record exists (before that
    /// there is no API to call).
    pub async fn run(self, network: Arc<Network>, mut stop: watch::Receiver<bool>) -> Vec<Sample> {
        let mut rng = Rng(self.seed);
        let mut samples = Vec::new();
        // The answer and when the cache drops it; the first expiry has a random phase.
        let mut cached: Option<(Vec<IpAddr>, Instant)> = None;
        let mut first_expiry = Some(self.ttl.mul_f64(rng.next_f64()));
        let mut next = Instant::now();
        // Once started, a resolution that finds no record is a failed request (the record
        // went away: `publish --scope Internal`).
        let mut started = false;
        while !*stop.borrow() {
            let now = Instant::now();
            if cached.as_ref().is_none_or(|(_, until)| now >= *until) {
                let mut answer = self.zone.borrow().clone();
                if answer.is_empty() {
                    cached = None;
                    if started {
                        samples.push(Sample {
                            policy: self.policy,
                            public: self.public,
                            resolved: false,
                            started: now,
                            latency: Duration::ZERO,
                            ok: false,
                        });
                    }
                } else {
                    started = true;
                    // Round-robin: each resolution hands the addresses out in a new order.
                    rng.shuffle(&mut answer);
                    let keep = first_expiry.take().unwrap_or(self.ttl);
                    cached = Some((answer, now + keep));
                }
            }
            if let Some((answer, _)) = &cached {
                let candidates: Vec<IpAddr> = match self.policy {
                    Policy::EveryAddress => answer.clone(),
                    Policy::FirstAddress => answer.iter().take(1).copied().collect(),
                    Policy::RandomAddress => vec![answer[rng.below(answer.len())]],
                };
                let started = Instant::now();
                let mut ok = false;
                for ip in candidates {
                    if request(&network, ip, self.connect_timeout).await {
                        ok = true;
                        break;
                    }
                }
                samples.push(Sample {
                    policy: self.policy,
                    public: self.public,
                    resolved: true,
                    started,
                    latency: started.elapsed(),
                    ok,
                });
            }
            next += self.period;
            tokio::select! {
                _ = tokio::time::sleep_until(next.max(Instant::now())) => {}
                _ = stop.changed() => {}
            }
        }
        samples
    }
}

/// One API call: connect and read the answer within `timeout`.
async fn request(network: &Network, ip: IpAddr, timeout: Duration) -> bool {
    let Ok(addr) = network.endpoint(ip).await else {
        return false;
    };
    let call = async {
        let mut conn = tokio::net::TcpStream::connect(addr).await.ok()?;
        let mut answer = Vec::new();
        conn.read_to_end(&mut answer).await.ok()?;
        Some(answer == b"ok\n")
    };
    matches!(tokio::time::timeout(timeout, call).await, Ok(Some(true)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handover::network::Alive;

    async fn one_request(policy: Policy, answer: &[&str], alive: &[&str]) -> Sample {
        let network = Network::new();
        network.set_alive(Alive {
            bootstrap: Default::default(),
            load_balancers: alive.iter().map(|ip| ip.parse().unwrap()).collect(),
        });
        let ips: Vec<IpAddr> = answer.iter().map(|ip| ip.parse().unwrap()).collect();
        let (_zone_tx, zone) = watch::channel(ips);
        let (stop_tx, stop) = watch::channel(false);
        let client = Client {
            policy,
            public: false,
            zone,
            ttl: Duration::from_secs(30),
            period: Duration::from_secs(60),
            connect_timeout: Duration::from_millis(200),
            seed: 7,
        };
        let task = tokio::spawn(client.run(network, stop));
        tokio::time::sleep(Duration::from_millis(700)).await;
        stop_tx.send_replace(true);
        let samples = task.await.unwrap();
        assert_eq!(samples.len(), 1, "{samples:?}");
        samples[0]
    }

    #[tokio::test]
    async fn every_address_reaches_the_live_one_after_waiting_on_the_dead_one() {
        let s = one_request(
            Policy::EveryAddress,
            &["10.0.0.1", "10.0.0.2"],
            &["10.0.0.2"],
        )
        .await;
        assert!(s.ok);
        let both_dead = one_request(Policy::EveryAddress, &["10.0.0.1", "10.0.0.2"], &[]).await;
        assert!(!both_dead.ok);
        assert!(
            both_dead.latency >= Duration::from_millis(400),
            "two timeouts"
        );
    }

    #[tokio::test]
    async fn a_dead_address_fails_a_single_address_client() {
        assert!(
            !one_request(Policy::FirstAddress, &["10.0.0.1"], &[])
                .await
                .ok
        );
        assert!(
            !one_request(Policy::RandomAddress, &["10.0.0.1"], &[])
                .await
                .ok
        );
        assert!(
            one_request(Policy::RandomAddress, &["10.0.0.1"], &["10.0.0.1"])
                .await
                .ok
        );
    }
}
