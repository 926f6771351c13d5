//! What each stage costs the cloud's DNS API, written once for every cloud. DNS is the
//! scarcest API of a shared account (Route53: 5 requests per second per account; Cloud DNS
//! and Azure DNS likewise small), and a fleet of installs queues there: a stage that changes
//! no record must not read any.

use super::cloud::{Cloud, Harness};

/// The DNS requests the peers saw since the last reset (reads included), as
/// `METHOD /path` or the action. Where one proxy carries DNS and the addresses (Azure's ARM),
/// the DNS ones are those under a DNS zone resource.
fn dns_calls<C: Cloud>(h: &Harness<C>) -> Vec<String> {
    let (dns, addresses) = h.peers.dns_and_address_proxies();
    let shared = std::ptr::eq(dns, addresses);
    dns.calls()
        .into_iter()
        .map(|c| c.action)
        .filter(|action| !shared || action.to_ascii_lowercase().contains("dnszones"))
        .collect()
}

/// `reserve` (its verifying second pass included), and `reserve` again once converged, send
/// the DNS API nothing; the address API is read. The DNS stages after it do read DNS (so the
/// count above is of something that happens).
pub async fn reserve_sends_the_dns_api_nothing<C: Cloud>() {
    let h = C::start().await;
    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    assert_eq!(dns_calls(&h), Vec::<String>::new(), "{} reserve", C::NAME);
    let (_, addresses) = h.peers.dns_and_address_proxies();
    assert!(
        !addresses.calls().is_empty(),
        "{}: reserve read nothing",
        C::NAME
    );

    h.peers.reset_counts();
    h.run(&["reserve"]).await;
    assert_eq!(
        dns_calls(&h),
        Vec::<String>::new(),
        "{} reserve again",
        C::NAME
    );

    h.peers.reset_counts();
    h.run(&["dns", "seed"]).await;
    assert!(
        !dns_calls(&h).is_empty(),
        "{}: dns seed read no DNS",
        C::NAME
    );
}
