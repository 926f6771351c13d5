//! A faithful local fake of the Azure APIs the agent uses (one module per resource type:
//! `public_ip`, `network`, `nic` (the bootstrap VM's network interface, PUT in `nic_put`),
//! `dns`, `tags`, `usages`, `resource_groups`; role assignments and
//! permissions in `authorization`; routing in `arm`, state in `world`; the HTTP side in
//! `serving`; what the agent does not own, set up by tests, in `foreign`), on two loopback
//! listeners:
//!
//! - ARM (`management.azure.com`): plain HTTP, so the counting/freezing [`Proxy`] can sit in
//!   front of it. Long-running-operation URLs are built from the `Host` the client used, so
//!   polls go through the proxy too.
//! - the Entra ID authority (`login.microsoftonline.com`): HTTPS with a throwaway CA, because
//!   azure_identity refuses a non-https authority host. `POST /{tenant}/oauth2/v2.0/token`
//!   accepts the fixture's client id and secret and issues bearer tokens ARM then requires.
//!   It is not proxied: token requests are POSTs but mutate nothing.
//!
//! [`AzurePeers`] (`peers`) is what tests and the README demo use: the fake, the proxy, the CA
//! file and the agent's environment.

mod arm;
mod authorization;
mod cloud;
mod compute;
mod dns;
mod dns_writer;
mod endpoints;
mod foreign;
mod lb_state;
mod lb_view;
mod load_balancers;
mod login;
mod md5;
mod network;
mod nic;
mod nic_put;
#[cfg(test)]
mod nic_tests;
mod peers;
mod preconditions;
mod provider_lb;
mod public_ip;
mod resource_groups;
mod security_groups;
mod serving;
mod tags;
mod usages;
mod world;

pub use authorization::RoleAssignment;
pub use cloud::{ALL_HOSTS, STACK_ARM_HOST, STACK_AUDIENCE, SimCloud};
pub use lb_view::{FoundPublicIp, SECURITY_GROUP, load_balancer_id};
pub use md5::hex as md5_hex;
pub use nic::{BOOTSTRAP_IP, BOOTSTRAP_IPCONFIG, BOOTSTRAP_NIC};
pub use peers::{AzurePeers, demo_peers};
pub use provider_lb::{FrontendAddress, SHARED_PROBE};
pub use resource_groups::RivalClaim;
pub use usages::PublicIpQuota;
pub use world::{
    CLIENT_ID, CLIENT_SECRET, CLUSTER_RG, COMPUTE_SUBNET, DNS_RG, INSTALLER_COMPUTE_SUBNET,
    INSTALLER_VNET, LOCATION, NETWORK_RG, PRIVATE_ZONE, PUBLIC_ZONE, SUBSCRIPTION, TENANT, VNET,
};

#[cfg(doc)]
use crate::proxy::Proxy;
use anyhow::Result;
use public_ip::pip_id;
use serde_json::{Map, Value, json};
use serving::{arm_handler, host_of, pki, segments, serve, to_response};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use world::World;

/// Knobs of the fake.
#[derive(Debug, Clone)]
pub struct AzureSimOptions {
    /// How long a public IP stays `Updating` / `Deleting`.
    pub provisioning_delay: Duration,
    /// The `Retry-After` (seconds) sent with long-running operations.
    pub retry_after: u64,
    /// Items per page of list calls (small, so `nextLink` is exercised).
    pub page_size: usize,
    /// The vnet the installer makes when the install-config names none (fixture
    /// `azure-default-network`), instead of the `azure` fixture's existing one.
    pub installer_network: bool,
    /// Dual-stack subnets (fixture `azure-dualstack`): each also has an IPv6 /64.
    pub dual_stack: bool,
    /// The cloud the fake is (see `cloud`): which token audience and issuer its ARM accepts.
    pub cloud: SimCloud,
}

impl Default for AzureSimOptions {
    fn default() -> Self {
        Self {
            provisioning_delay: Duration::from_millis(300),
            retry_after: 1,
            page_size: 3,
            installer_network: false,
            dual_stack: false,
            cloud: SimCloud::Public,
        }
    }
}

pub struct AzureSim {
    pub arm_addr: SocketAddr,
    /// ARM over TLS (the fake's CA), for clients that dial the cloud's real host name pinned
    /// here (`BOOTSTRAP_AGENT_AZURE_RESOLVE`). Not behind the counting proxy.
    pub arm_tls_addr: SocketAddr,
    pub login_addr: SocketAddr,
    pub ca_pem: String,
    world: Arc<Mutex<World>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl AzureSim {
    /// The fake's public IPs as the simulated service controller uses them: a frontend on
    /// one shows in its `ipConfiguration`, and it cannot be deleted then (see `public_ip`).
    pub fn address_book(&self) -> crate::kube::AddressBook {
        crate::kube::AddressBook(Arc::new(PublicIpUsers(self.world.clone())))
    }
}

struct PublicIpUsers(Shared);

impl crate::kube::AddressUsers for PublicIpUsers {
    fn attach(&self, ip: IpAddr, lb: &str) {
        lock(&self.0).use_public_ip(ip, lb, true);
    }

    fn detach(&self, ip: IpAddr, lb: &str) {
        lock(&self.0).use_public_ip(ip, lb, false);
    }
}

impl Drop for AzureSim {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

type Shared = Arc<Mutex<World>>;

fn lock(world: &Shared) -> std::sync::MutexGuard<'_, World> {
    world.lock().unwrap_or_else(|p| p.into_inner())
}

impl AzureSim {
    pub async fn start(options: AzureSimOptions) -> Result<Self> {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
        let mut w = World::fixture(
            options.provisioning_delay,
            options.installer_network,
            options.dual_stack,
        );
        w.retry_after = options.retry_after;
        w.page_size = options.page_size.max(1);
        w.cloud = options.cloud;
        let arm = TcpListener::bind("127.0.0.1:0").await?;
        let login = TcpListener::bind("127.0.0.1:0").await?;
        w.login_origin = format!("https://127.0.0.1:{}", login.local_addr()?.port());
        let world = Arc::new(Mutex::new(w));
        let arm_tls = TcpListener::bind("127.0.0.1:0").await?;
        let (arm_addr, login_addr) = (arm.local_addr()?, login.local_addr()?);
        let arm_tls_addr = arm_tls.local_addr()?;
        let (ca_pem, server) = pki()?;
        let acceptor = tokio_rustls::TlsAcceptor::from(server);
        let arm_task = serve(arm, None, world.clone(), |req, w| {
            arm_handler(req, w, "http")
        });
        let tls = Some(acceptor);
        let arm_tls_task = serve(arm_tls, tls.clone(), world.clone(), |req, w| {
            arm_handler(req, w, "https")
        });
        let login_task = serve(login, tls, world.clone(), login::login_handler);
        Ok(Self {
            arm_addr,
            arm_tls_addr,
            login_addr,
            ca_pem,
            world,
            tasks: vec![arm_task, login_task, arm_tls_task],
        })
    }

    pub fn arm_url(&self) -> String {
        format!("http://{}", self.arm_addr)
    }

    /// The authority host (https; trust [`AzureSim::ca_pem`]).
    pub fn login_url(&self) -> String {
        format!("https://127.0.0.1:{}", self.login_addr.port())
    }

    /// A bearer token ARM accepts, for oracles that do not go through the token endpoint.
    pub fn issue_token(&self) -> String {
        let token = format!("fake-arm-token-{}", uuid::Uuid::new_v4());
        let mut w = lock(&self.world);
        let own = w.cloud.own_token();
        w.tokens.insert(token.clone(), own);
        token
    }

    /// `host=ip:port,...` pinning every host name of every cloud the fake knows to it (ARM
    /// names to the TLS ARM listener, login names to the authority), for
    /// `BOOTSTRAP_AGENT_AZURE_RESOLVE`.
    pub fn resolve_pins(&self) -> String {
        ALL_HOSTS
            .iter()
            .map(|host| {
                let addr = if host.starts_with("login.") {
                    self.login_addr
                } else {
                    self.arm_tls_addr
                };
                format!("{host}={addr}")
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    pub fn set_provisioning_delay(&self, delay: Duration) {
        lock(&self.world).delay = delay;
    }

    /// Arms a rival writer: each of the next conditional record-set writes (of the matching
    /// family) is preceded by a write of one of `values`, so the client's ETag is stale and it
    /// gets 412 PreconditionFailed.
    pub fn race_record_writes(&self, values: &[IpAddr]) {
        lock(&self.world).rival_writes.extend_from_slice(values);
    }

    /// The private addresses of the network interface `name` now (the bootstrap VM's is
    /// `mycluster-7xk2p-bootstrap-nic`), primary ipConfiguration first; empty when there is no
    /// such NIC. An ipConfiguration added by a PUT counts from the PUT on (its address is
    /// allocated then), one removed stops counting then.
    pub fn nic_private_addresses(&self, name: &str) -> Vec<Ipv4Addr> {
        lock(&self.world).nic_addresses(name)
    }

    /// Another cluster's bootstrap VM: its NIC `<infra_id>-bootstrap-nic` in resource group
    /// `rg` (created when missing), its primary IP configuration holding `ip`.
    pub fn add_bootstrap_nic(&self, rg: &str, infra_id: &str, ip: Ipv4Addr) {
        let mut w = lock(&self.world);
        w.add_resource_group(rg);
        w.add_nic(rg, infra_id, ip);
    }

    /// Marks a private address as used by some NIC (CheckIPAddressAvailability says taken).
    pub fn mark_in_use(&self, ip: Ipv4Addr) {
        lock(&self.world).in_use.insert(ip);
    }

    /// Replaces the agent's role assignments (preflight's `permissions`, and every call's
    /// authorization).
    pub fn set_roles(&self, roles: Vec<RoleAssignment>) {
        lock(&self.world).roles = roles;
    }

    pub fn set_public_ip_quota(&self, quota: PublicIpQuota) {
        lock(&self.world).quota = quota;
    }

    /// Deletes a subnet of the vnet (as if the install-config named one that is not there).
    pub fn remove_subnet(&self, name: &str) {
        lock(&self.world)
            .vnet
            .subnets
            .retain(|s| !s.name.eq_ignore_ascii_case(name));
    }

    /// Every address of a subnet in use (CheckIPAddressAvailability then names none free).
    pub fn fill_subnet(&self, name: &str) {
        let mut w = lock(&self.world);
        let Some(subnet) = w.vnet.subnets.iter().find(|s| s.name == name).cloned() else {
            return;
        };
        let base = u32::from(subnet.network);
        for offset in 0..(1u32 << (32 - subnet.len)) {
            w.in_use.insert(Ipv4Addr::from(base + offset));
        }
    }

    /// Replaces the private zone's virtual network links with links to `vnet_ids`.
    pub fn set_private_zone_links(&self, vnet_ids: &[&str]) {
        let mut w = lock(&self.world);
        if let Some(zone) =
            w.zones
                .get_mut(&(true, CLUSTER_RG.to_string(), PRIVATE_ZONE.to_string()))
        {
            zone.links = vnet_ids
                .iter()
                .enumerate()
                .map(|(i, id)| (format!("link-{i}"), id.to_string()))
                .collect();
        }
    }

    /// The compute subnet's range: where the internal load balancer takes its frontend IP.
    pub fn compute_subnet_range(&self) -> Option<crate::kube::Ipv4Cidr> {
        self.compute_subnet(|s| {
            u8::try_from(s.len)
                .ok()
                .map(|len| crate::kube::Ipv4Cidr::new(s.network, len))
        })
    }

    /// The compute subnet's IPv6 prefix, when it is dual stack.
    pub fn compute_subnet_range_ipv6(&self) -> Option<crate::kube::Ipv6Cidr> {
        self.compute_subnet(|s| {
            s.ipv6
                .map(|(net, len)| crate::kube::Ipv6Cidr::new(net, len))
        })
    }

    /// `fact` of the compute subnet (by the fixture's name or the installer's).
    fn compute_subnet<T>(&self, fact: impl FnOnce(&network::Subnet) -> Option<T>) -> Option<T> {
        let w = lock(&self.world);
        let mut subnets = w.vnet.subnets.iter();
        subnets
            .find(|s| s.name == COMPUTE_SUBNET || s.name == INSTALLER_COMPUTE_SUBNET)
            .and_then(fact)
    }

    /// What the simulated Azure load-balancer controller reads of this fake.
    pub fn lb_view(&self) -> AzureLbView {
        AzureLbView {
            world: self.world.clone(),
        }
    }

    /// What exists now:
    /// `{public_ips: [{name, id, ip, version, sku, state, tags}], resource_group_tags: {rg:
    /// {..}}, bootstrap_nic: {name, ip_configurations: [{name, ip, allocation, primary}]},
    /// nics: [{rg, name, ip_configurations: [...]}], zones: {public|private: {"<fqdn> <TYPE>":
    /// [values]}}, etags: {...}}` (the bootstrap VM's NIC `<infra-id>-bootstrap-nic`, primary
    /// ipConfiguration first, null when the world has none; `nics`: every NIC, likewise).
    pub fn inspect(&self) -> Value {
        let mut w = lock(&self.world);
        w.tick();
        let public_ips: Vec<Value> = w
            .public_ips
            .values()
            .map(|p| {
                json!({
                    "name": p.name, "id": pip_id(&p.rg, &p.name), "rg": p.rg,
                    "ip": p.ip.map(|ip| ip.to_string()), "version": p.version, "sku": p.sku,
                    "allocation": p.allocation, "state": p.state, "tags": p.tags,
                })
            })
            .collect();
        let rg_tags: Map<String, Value> = w
            .resource_groups
            .iter()
            .map(|(rg, tags)| (rg.clone(), Value::Object(tags.clone())))
            .collect();
        let mut zones = json!({"public": {}, "private": {}});
        let mut etags = json!({"public": {}, "private": {}});
        for ((private, _, zone), z) in &w.zones {
            let vis = if *private { "private" } else { "public" };
            for ((rtype, name), set) in &z.records {
                let (key, values) = set.shown(zone, rtype, name);
                zones[vis][&key] = json!(values);
                etags[vis][&key] = json!(set.etag);
            }
        }
        let nic_json = |nic: &nic::Nic| {
            let mut configs: Vec<&nic::IpConfig> = nic.ipconfigs.iter().collect();
            configs.sort_by_key(|c| !c.primary);
            let configs: Vec<Value> = configs
                .iter()
                .map(|c| {
                    json!({"name": c.name, "ip": c.ip.to_string(),
                           "allocation": c.allocation, "primary": c.primary})
                })
                .collect();
            json!({"rg": nic.rg, "name": nic.name, "ip_configurations": configs})
        };
        let bootstrap_nic = w
            .nics
            .values()
            .find(|n| n.rg == CLUSTER_RG && n.name.eq_ignore_ascii_case(BOOTSTRAP_NIC))
            .map(nic_json);
        let nics: Vec<Value> = w.nics.values().map(nic_json).collect();
        json!({
            "public_ips": public_ips,
            "resource_group_tags": rg_tags,
            "bootstrap_nic": bootstrap_nic,
            "nics": nics,
            "zones": zones,
            "etags": etags,
        })
    }
}

/// The fake as cloud-provider-azure reads it: the cloud config's `resourceGroup` (the
/// cluster's) and the addresses of each resource group's public IPs (`ListPIP`). Reads the
/// world directly, so nothing shows in the proxy's counts.
#[derive(Clone)]
pub struct AzureLbView {
    world: Shared,
}

impl std::fmt::Debug for AzureLbView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AzureLbView")
    }
}

impl AzureLbView {
    /// The cloud config's `resourceGroup`.
    pub fn cluster_resource_group(&self) -> String {
        CLUSTER_RG.to_string()
    }

    /// The private addresses of the network interface `name` (see
    /// [`AzureSim::nic_private_addresses`]).
    pub fn nic_private_addresses(&self, name: &str) -> Vec<Ipv4Addr> {
        lock(&self.world).nic_addresses(name)
    }

    /// The addresses of the public IPs in resource group `rg` (ARM names are case-insensitive).
    pub fn public_ips_in(&self, rg: &str) -> Vec<String> {
        let mut w = lock(&self.world);
        w.tick();
        w.public_ips
            .values()
            .filter(|p| p.rg.eq_ignore_ascii_case(rg))
            .filter_map(|p| p.ip.map(|ip| ip.to_string()))
            .collect()
    }
}
