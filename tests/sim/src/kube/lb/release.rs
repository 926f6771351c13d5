//! What a Service's load balancer leaves behind: releasing it once the Service is gone (the
//! cloud provider's deletion, then its addresses), the addresses it uses in the cloud's book,
//! and the waits of the providers' long-running calls.

use super::{Held, Id, LoadBalancers, Store, Used, aws, gce_build, lb_resource_name, lock};
use super::{meta, requested_ips};
use serde_json::{Value, json};
use std::net::IpAddr;

impl LoadBalancers {
    /// Gives back everything the Service `ns/name` with `uid` held (it was deleted or is no
    /// longer a LoadBalancer), [`super::CloudOptions::release_delay`] later. A Service re-created
    /// under that name keeps what it holds.
    pub async fn release(&self, ns: &str, name: &str, uid: &str) {
        let id = (ns.to_string(), name.to_string());
        let gone = {
            let mut held = self.held.lock().await;
            if held.get(&id).is_some_and(|h| h.uid == uid) {
                held.remove(&id)
            } else {
                None
            }
        };
        let used = {
            let mut used = lock(&self.used);
            if used.get(&id).is_some_and(|u| u.uid == uid) {
                used.remove(&id)
            } else {
                None
            }
        };
        if gone.is_none() && used.is_none() {
            return;
        }
        tokio::time::sleep(self.cloud.release_delay).await;
        if let Some(gcp) = &self.cloud.gcp {
            // The provider deletes what it built, one call after the other, its Operations
            // waited, in the queue of the Services' syncs.
            let _one_at_a_time = self.sync_queue.lock().await;
            let lb = lb_resource_name(&json!({"metadata": {"uid": uid}}));
            // Never refused: what another load balancer uses, or what is gone, is skipped.
            let _ = gce_build::run(gcp, &gce_build::delete(gcp, &lb)).await;
        }
        if let Some(gone) = gone {
            self.give_back(&gone.held).await;
        }
        if let (Some(used), Some(book)) = (&used, &self.cloud.addresses) {
            for ip in &used.ips {
                book.0.detach(*ip, &used.lb);
            }
        }
        if let (Some(used), Some(azure)) = (&used, &self.cloud.azure) {
            let ips: Vec<String> = used.ips.iter().map(ToString::to_string).collect();
            // Never refused: what is left is PUT back as ARM stored it.
            let _ = azure.remove_service_lb(&used.lb, &ips);
            for ip in &ips {
                azure.remove_destination(ip);
            }
        }
    }

    /// Records that the Service's load balancer uses the addresses it asks for, and no longer
    /// the ones it used before (in the cloud's address book too, when there is one).
    pub(super) fn uses(&self, id: &Id, svc: &Value) {
        let ips: Vec<IpAddr> = requested_ips(svc)
            .iter()
            .filter_map(|ip| ip.parse().ok())
            .collect();
        let lb = lb_resource_name(svc);
        let mut used = lock(&self.used);
        if let Some(book) = &self.cloud.addresses {
            if let Some(old) = used.get(id) {
                for ip in old
                    .ips
                    .iter()
                    .filter(|ip| old.lb != lb || !ips.contains(ip))
                {
                    book.0.detach(*ip, &old.lb);
                }
            }
            for ip in &ips {
                book.0.attach(*ip, &lb);
            }
        }
        let uid = meta::uid(svc).to_string();
        used.insert(id.clone(), Used { uid, lb, ips });
    }

    /// Why the targets of the Service's NLB cannot be registered (None: they can, or the
    /// cloud facts to judge are not given). The targets are the pods it selects now.
    pub(super) async fn unregistered(&self, store: &Store, svc: &Value) -> Option<String> {
        let (Some(ec2), Some(cluster)) = (&self.ec2, &self.cloud.aws_cluster_name) else {
            return None;
        };
        let targets = super::super::endpoints::selected_ips(&store.lock(), svc);
        aws::backend_security_groups(ec2, cluster, &targets)
            .await
            .err()
    }

    /// Azure: the provider's NIC PUTs, when the sync added NICs to a pool (`before`: the pool
    /// references then), are long-running operations it waits for before the next call
    /// (`azure_standard.go:964-1007`): about 1 s per Service whose NICs joined, as the real CCM
    /// took against the fake; none for a Service whose NICs were in already.
    pub(super) async fn wait_nic_updates(&self, before: Option<usize>) {
        if let (Some(azure), Some(before)) = (&self.cloud.azure, before)
            && azure.pool_references() > before
        {
            tokio::time::sleep(azure.nic_update_wait()).await;
        }
    }

    pub(super) async fn give_back(&self, held: &Held) {
        if let Held::Nlb(nlb) = held {
            aws::release(self.ec2.as_ref(), nlb).await;
        }
    }
}
