//! Preflight `control-plane-security-groups`: whether the AWS Load Balancer Controller can
//! open the control plane to its NLBs.
//!
//! With target type `ip` the controller adds its backend rule to one security group per
//! target ENI: the only one when the ENI has a single group, else the one group tagged with
//! the key `kubernetes.io/cluster/<cluster-name>` (any value). Zero or several tagged groups
//! and it refuses the whole target group: "expected exactly one securityGroup tagged with
//! kubernetes.io/cluster/<name> for eni <id>, got: [...] (clusterName: <name>)"
//! (kubernetes-sigs/aws-load-balancer-controller `pkg/targetgroupbinding/networking_manager.go`,
//! `resolveEndpointSGForENI`). In v2.8 that error returns before `RegisterTargets`
//! (`resource_manager.go`, `reconcileWithIPTargetType`): the NLB exists and never gets a target.
//!
//! Our targets are the control-plane nodes' IPs (host-network kube-apiserver and MCS), each on
//! its instance's primary ENI (device index 0). The installer's CAPA gives a control-plane
//! instance three groups, `<infra-id>-node`, `-lb` and `-controlplane` (`pkg/cloud/services/
//! ec2/instances.go`, `GetCoreSecurityGroups`), and tags only `-lb` with the key: it removes the
//! key from every other group (`pkg/cloud/services/securitygroup/securitygroups.go`,
//! `getSecurityGroupTagParams`). User-added groups (`additionalSecurityGroupIDs`) or retagging
//! break that.
//!
//! The instances are found as the installer names them (tag `Name` = `<infra-id>-master-*`,
//! pending or running). Before they exist the line only warns: on an installer-driven install
//! the agent starts while the masters are still being created, and nothing can be judged yet.

use super::classify;
use crate::preflight::Check;
use aws_sdk_ec2::types::{Filter, Instance};
use std::collections::{BTreeMap, BTreeSet};

pub(super) const NAME: &str = "control-plane-security-groups";

/// A security group on a target ENI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Group {
    pub id: String,
    pub name: String,
}

/// A control-plane instance's primary ENI (where its node IP lives) and its groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TargetEni {
    /// The instance's `Name` tag, else its id.
    pub instance: String,
    pub eni: String,
    pub groups: Vec<Group>,
}

/// The control-plane instances' primary ENIs, and the tag keys of every group that must be
/// told apart (those of ENIs with more than one group). `fix` is said on a refusal.
pub(super) async fn check(
    ec2: &aws_sdk_ec2::Client,
    infra_id: &str,
    fix: impl Fn(&str) -> String,
) -> Check {
    // A refused or failed read is the check's failure, never "no instance" or "no tag".
    let failed = |call: &str, e| Check::from_error(NAME, &e, fix(&format!("ec2:{call}")));
    let out = match ec2
        .describe_instances()
        .filters(
            Filter::builder()
                .name("tag:Name")
                .values(format!("{infra_id}-master-*"))
                .build(),
        )
        .filters(
            Filter::builder()
                .name("instance-state-name")
                .values("pending")
                .values("running")
                .build(),
        )
        .send()
        .await
        .map_err(|e| classify("DescribeInstances", e))
    {
        Ok(out) => out,
        Err(e) => return failed("DescribeInstances", e),
    };
    let targets: Vec<TargetEni> = out
        .reservations()
        .iter()
        .flat_map(|r| r.instances())
        .filter_map(target_eni)
        .collect();
    let ids: BTreeSet<&str> = targets
        .iter()
        .filter(|t| t.groups.len() > 1)
        .flat_map(|t| t.groups.iter().map(|g| g.id.as_str()))
        .collect();
    let mut tags = BTreeMap::new();
    if !ids.is_empty() {
        let out = match ec2
            .describe_security_groups()
            .set_group_ids(Some(ids.iter().map(|s| s.to_string()).collect()))
            .send()
            .await
            .map_err(|e| classify("DescribeSecurityGroups", e))
        {
            Ok(out) => out,
            Err(e) => return failed("DescribeSecurityGroups", e),
        };
        for group in out.security_groups() {
            let keys: BTreeSet<String> = group
                .tags()
                .iter()
                .filter_map(|t| t.key().map(str::to_string))
                .collect();
            if let Some(id) = group.group_id() {
                tags.insert(id.to_string(), keys);
            }
        }
    }
    judge(infra_id, &targets, &tags)
}

/// The instance's ENI at device index 0 (its primary private IP, the node IP).
fn target_eni(instance: &Instance) -> Option<TargetEni> {
    let eni = instance
        .network_interfaces()
        .iter()
        .find(|n| n.attachment().and_then(|a| a.device_index()) == Some(0))?;
    let name = instance
        .tags()
        .iter()
        .find(|t| t.key() == Some("Name"))
        .and_then(|t| t.value())
        .or(instance.instance_id())
        .unwrap_or("?");
    Some(TargetEni {
        instance: name.to_string(),
        eni: eni.network_interface_id().unwrap_or("?").to_string(),
        groups: eni
            .groups()
            .iter()
            .map(|g| Group {
                id: g.group_id().unwrap_or("?").to_string(),
                name: g.group_name().unwrap_or("").to_string(),
            })
            .collect(),
    })
}

/// PURE: the controller's rule applied to each target ENI (`tags`: group id -> tag keys).
/// Its refusal, word for word, when an ENI with several groups has not exactly one tagged.
pub(super) fn judge(
    infra_id: &str,
    targets: &[TargetEni],
    tags: &BTreeMap<String, BTreeSet<String>>,
) -> Check {
    let key = super::cluster_tag(infra_id);
    if targets.is_empty() {
        return Check::warn(
            NAME,
            format!(
                "not checked: no instance named {infra_id}-master-* is pending or running yet (the installer creates them while the bootstrap host boots). The AWS Load Balancer Controller adds its rule to the one security group tagged {key} on each control-plane ENI; with none or several it registers no target and the gate times out"
            ),
            Some(format!(
                "nothing to do now; once the masters exist, `bootstrap-agent preflight` checks them (or: aws ec2 describe-instances --filters Name=tag:Name,Values={infra_id}-master-*)"
            )),
        );
    }
    let named = |g: &Group| {
        if g.name.is_empty() {
            g.id.clone()
        } else {
            format!("{} ({})", g.id, g.name)
        }
    };
    let mut found = Vec::new();
    let mut refused = Vec::new();
    for t in targets {
        let chosen = if let [only] = t.groups.as_slice() {
            Ok(only)
        } else {
            let tagged: Vec<&Group> = t
                .groups
                .iter()
                .filter(|g| tags.get(&g.id).is_some_and(|k| k.contains(&key)))
                .collect();
            match tagged.as_slice() {
                [one] => Ok(*one),
                _ => Err(tagged),
            }
        };
        match chosen {
            Ok(group) => found.push(format!("{} {}: {}", t.instance, t.eni, named(group))),
            Err(tagged) => {
                // The controller lists them sorted (a string set's List()).
                let mut ids: Vec<&str> = tagged.iter().map(|g| g.id.as_str()).collect();
                ids.sort_unstable();
                refused.push(format!(
                    "{} {} has {} groups [{}], {} tagged {key}; the AWS Load Balancer Controller refuses: \"expected exactly one securityGroup tagged with {key} for eni {}, got: [{}] (clusterName: {infra_id})\"",
                    t.instance,
                    t.eni,
                    t.groups.len(),
                    t.groups.iter().map(named).collect::<Vec<_>>().join(", "),
                    ids.len(),
                    t.eni,
                    ids.join(" ")
                ));
            }
        }
    }
    if refused.is_empty() {
        Check::pass(
            NAME,
            format!(
                "the controller's backend rule goes to: {}",
                found.join("; ")
            ),
        )
    } else {
        Check::fail(
            NAME,
            refused.join("; "),
            format!(
                "tag exactly one security group of each control-plane ENI with {key} (the installer tags {infra_id}-lb) and remove the key from its other groups: aws ec2 create-tags --resources <sg> --tags Key={key},Value=owned; aws ec2 delete-tags --resources <sg> --tags Key={key}"
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::preflight::Verdict;

    const INFRA: &str = "mycluster-7xk2p";

    fn eni(groups: &[(&str, &str)]) -> TargetEni {
        TargetEni {
            instance: format!("{INFRA}-master-0"),
            eni: "eni-0a".into(),
            groups: groups
                .iter()
                .map(|(id, name)| Group {
                    id: id.to_string(),
                    name: name.to_string(),
                })
                .collect(),
        }
    }

    fn tagged(ids: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
        let key = format!("kubernetes.io/cluster/{INFRA}");
        ["sg-lb", "sg-cp", "sg-node"]
            .iter()
            .map(|id| {
                let mut keys = BTreeSet::from(["Name".to_string()]);
                if ids.contains(id) {
                    keys.insert(key.clone());
                }
                (id.to_string(), keys)
            })
            .collect()
    }

    const INSTALLER: [(&str, &str); 3] = [
        ("sg-node", "mycluster-7xk2p-node"),
        ("sg-lb", "mycluster-7xk2p-lb"),
        ("sg-cp", "mycluster-7xk2p-controlplane"),
    ];

    /// The installer's three groups with only `-lb` tagged pass, naming the group the rule
    /// goes to; none or two tagged fail with the controller's own words and the groups found.
    #[test]
    fn exactly_one_tagged_group_passes_and_none_or_two_fail_in_the_controllers_words() {
        let ok = judge(INFRA, &[eni(&INSTALLER)], &tagged(&["sg-lb"]));
        assert_eq!(ok.verdict, Verdict::Pass, "{ok:?}");
        assert!(ok.reason.contains("sg-lb (mycluster-7xk2p-lb)"), "{ok:?}");

        let none = judge(INFRA, &[eni(&INSTALLER)], &tagged(&[]));
        assert_eq!(none.verdict, Verdict::Fail, "{none:?}");
        assert!(
            none.reason.contains(
                "\"expected exactly one securityGroup tagged with kubernetes.io/cluster/mycluster-7xk2p for eni eni-0a, got: [] (clusterName: mycluster-7xk2p)\""
            ),
            "{none:?}"
        );
        assert!(
            none.reason.contains("sg-cp (mycluster-7xk2p-controlplane)"),
            "{none:?}"
        );

        let two = judge(INFRA, &[eni(&INSTALLER)], &tagged(&["sg-node", "sg-lb"]));
        assert_eq!(two.verdict, Verdict::Fail, "{two:?}");
        assert!(two.reason.contains("got: [sg-lb sg-node]"), "{two:?}");
        assert!(
            two.fix.as_deref().unwrap_or("").contains("create-tags"),
            "{two:?}"
        );
    }

    /// An ENI with a single group is used whatever its tags.
    #[test]
    fn a_single_group_is_used_untagged() {
        let one = judge(INFRA, &[eni(&[("sg-x", "default")])], &BTreeMap::new());
        assert_eq!(one.verdict, Verdict::Pass, "{one:?}");
        assert!(one.reason.contains("sg-x (default)"), "{one:?}");
    }

    /// Before the masters exist there is nothing to judge: a warning that says what will
    /// happen if their groups are wrong, never a failure.
    #[test]
    fn no_control_plane_instance_yet_only_warns() {
        let check = judge(INFRA, &[], &BTreeMap::new());
        assert_eq!(check.verdict, Verdict::Warn, "{check:?}");
        assert!(
            check.reason.starts_with("not checked")
                && check.reason.contains("mycluster-7xk2p-master-*"),
            "{check:?}"
        );
    }
}
