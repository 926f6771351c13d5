//! Route53's record sets as the agent lists and writes them: names compared without the
//! trailing dot and by whole labels, a listed set found by name and type (an alias or
//! routing-policy set refused), the sets and changes of a batch built.

use crate::{CloudError, RecordKey, RecordSet, RecordType, Zone};
use aws_sdk_route53::types::{Change, ChangeAction, ResourceRecord, ResourceRecordSet, RrType};
use std::collections::BTreeSet;
use std::net::IpAddr;

/// Route53 names end with a dot and may use escapes; compare lowercase without the dot.
pub(super) fn normalize(name: &str) -> String {
    name.trim_end_matches('.').to_ascii_lowercase()
}

/// Record sets one `Route53Dns::read_zone` lists: the apex's own (SOA, NS), then a cluster's
/// `api-int`, `api` and the few beside them.
pub(super) const ZONE_LISTING: i32 = 20;

/// The record set `key` among `sets` (as ListResourceRecordSets gives them), None when it is
/// not there. An alias or routing-policy set is refused: round-robin values cannot be added
/// to it.
pub(super) fn listed(
    sets: &[ResourceRecordSet],
    zone: &Zone,
    key: &RecordKey,
) -> Result<Option<RecordSet>, CloudError> {
    let Some(set) = sets
        .iter()
        .find(|s| normalize(s.name()) == normalize(&key.name) && *s.r#type() == rr_type(key.rtype))
    else {
        return Ok(None);
    };
    if set.alias_target().is_some() || set.set_identifier().is_some() {
        return Err(CloudError::fatal(
            "ListResourceRecordSets",
            format!(
                "{key} in {} is an alias or routing-policy record; round-robin values cannot be added to it",
                zone.reference
            ),
        ));
    }
    let ttl = set.ttl().and_then(|t| u32::try_from(t).ok()).unwrap_or(60);
    let values = set.resource_records().iter().map(|r| r.value());
    crate::dns::set_compared_by_value("ListResourceRecordSets", key, values, ttl).map(Some)
}

/// The longest name whose descendants (or itself) all of `names` are, compared by whole
/// labels: `mycluster.example.com` for `api.mycluster.example.com` and
/// `api-int.mycluster.example.com`. None when they share no label.
pub(super) fn common_parent<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut names = names.into_iter().map(|name| {
        let name = normalize(name);
        name.rsplit('.').map(str::to_string).collect::<Vec<_>>()
    });
    let mut common = names.next()?;
    for labels in names {
        let shared = common
            .iter()
            .zip(&labels)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(shared);
    }
    if common.is_empty() {
        return None;
    }
    common.reverse();
    Some(common.join("."))
}

/// Whether `name` is `parent` or below it (both normalized).
pub(super) fn descends_from(name: &str, parent: &str) -> bool {
    name == parent
        || name
            .strip_suffix(parent)
            .is_some_and(|above| above.ends_with('.'))
}

pub(super) fn rr_type(t: RecordType) -> RrType {
    match t {
        RecordType::A => RrType::A,
        RecordType::Aaaa => RrType::Aaaa,
    }
}

pub(super) fn record_set(
    key: &RecordKey,
    ttl: u32,
    values: &BTreeSet<IpAddr>,
) -> Result<ResourceRecordSet, CloudError> {
    let invalid = |e: aws_sdk_route53::error::BuildError| {
        CloudError::fatal("ChangeResourceRecordSets", e.to_string())
    };
    let mut builder = ResourceRecordSet::builder()
        .name(format!("{}.", key.name))
        .r#type(rr_type(key.rtype))
        .ttl(i64::from(ttl));
    for value in values {
        builder = builder.resource_records(
            ResourceRecord::builder()
                .value(value.to_string())
                .build()
                .map_err(invalid)?,
        );
    }
    builder.build().map_err(invalid)
}

pub(super) fn change(action: ChangeAction, set: ResourceRecordSet) -> Result<Change, CloudError> {
    Change::builder()
        .action(action)
        .resource_record_set(set)
        .build()
        .map_err(|e| CloudError::fatal("ChangeResourceRecordSets", e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cluster's `api` and `api-int` are listed from the cluster's domain; names that share
    /// only a label's prefix (`api` and `api-int`) do not share it as a parent.
    #[test]
    fn the_common_parent_is_the_longest_shared_suffix_of_whole_labels() {
        let parent = |names: &[&str]| common_parent(names.iter().copied());
        assert_eq!(
            parent(&[
                "api.mycluster.example.com",
                "API-INT.mycluster.example.com."
            ])
            .as_deref(),
            Some("mycluster.example.com")
        );
        assert_eq!(
            parent(&["api.a.example.com", "api.b.example.com", "x.example.com"]).as_deref(),
            Some("example.com")
        );
        assert_eq!(
            parent(&["api.example.com", "api.example.com"]).as_deref(),
            Some("api.example.com")
        );
        assert_eq!(parent(&["api.example.com", "api.example.net"]), None);
        assert_eq!(parent(&["a.api", "a.api-int"]), None);
        assert_eq!(parent(&[]), None);
    }

    #[test]
    fn a_name_descends_from_itself_and_its_parents_by_whole_labels() {
        assert!(descends_from(
            "mycluster.example.com",
            "mycluster.example.com"
        ));
        assert!(descends_from(
            "api.mycluster.example.com",
            "mycluster.example.com"
        ));
        assert!(!descends_from(
            "xmycluster.example.com",
            "mycluster.example.com"
        ));
        assert!(!descends_from("other.example.com", "mycluster.example.com"));
        assert!(!descends_from("example.com", "mycluster.example.com"));
    }
}
