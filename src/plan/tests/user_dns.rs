//! User-managed DNS: the same reservations, no record change, the records to create.

use super::*;

// ---- user-managed DNS -------------------------------------------------------------------------

/// Each cloud fixture as if its install-config said userProvisionedDNS: Enabled.
fn user_managed(name: &str) -> ClusterSpec {
    let mut spec = spec(name);
    spec.dns = crate::assets::DnsManagement::UserManaged {
        because: "test".into(),
    };
    spec
}

const CLOUDS: [&str; 6] = [
    "aws",
    "aws-internal",
    "azure",
    "azure-dualstack",
    "azure-mixed-api-external",
    "gcp",
];

/// User-managed DNS: the same reservations as with cloud DNS, no record change and no record
/// to read in any stage, and the records the user must create are exactly the records the
/// agent would have seeded, with the same values.
#[test]
fn user_managed_dns_reserves_the_same_ips_and_plans_and_reads_no_record() {
    for name in CLOUDS {
        let cloud = spec(name);
        let user = user_managed(name);
        assert!(
            records_of_interest(&user).is_empty(),
            "{name}: no zone lookup"
        );
        let cloud_plan = Plan::calculate(&cloud, &Observed::default(), &STAGE1, 1);
        let user_plan = Plan::calculate(&user, &Observed::default(), &STAGE1, 1);
        let reservations = |p: &Plan| -> Vec<Change> {
            p.changes
                .iter()
                .filter(|c| is_reservation(c))
                .cloned()
                .collect()
        };
        assert_eq!(
            reservations(&user_plan),
            reservations(&cloud_plan),
            "{name}"
        );
        assert!(user_plan.changes.iter().all(is_reservation), "{name}");
        assert!(cloud_plan.user_dns.is_none(), "{name}");
        let user_dns = user_plan.user_dns.as_ref().expect("records for the user");
        assert_eq!(user_dns.because, "test");
        assert_eq!(user_dns.bootstrap_ip, Some(ip(BOOTSTRAP)));
        let seeded: Vec<(ZoneRef, RecordKey, Vec<Value>)> = cloud_plan
            .changes
            .iter()
            .filter_map(|c| match c {
                Change::AddRecordValues {
                    zone,
                    record,
                    values,
                    ..
                } => Some((zone.clone(), record.clone(), values.clone())),
                _ => None,
            })
            .collect();
        let for_user: Vec<(ZoneRef, RecordKey, Vec<Value>)> = user_dns
            .records
            .iter()
            .map(|r| (r.zone.clone(), r.record.clone(), r.values.clone()))
            .collect();
        assert_eq!(for_user, seeded, "{name}");

        // Step 3 and a failed install's teardown: no DNS change even where records with
        // our values are visible (they are not ours to edit).
        let done = done(&user);
        for stage in [Step::RemoveBootstrap, Step::TeardownAll] {
            let plan = Plan::calculate(&user, &done, &[stage], 1);
            assert!(plan.changes.iter().all(is_reservation), "{name} {stage:?}");
        }
        let teardown = Plan::calculate(&user, &done, &[Step::TeardownAll], 1);
        assert_eq!(
            releases(&teardown).len(),
            done.reservations.len(),
            "{name}: teardown --all releases every reservation"
        );
    }
}

/// Once reserved, the records carry the IPs themselves, in text and in JSON.
#[test]
fn user_managed_dns_prints_the_reserved_ips_once_they_exist() {
    let spec = user_managed("gcp");
    let observed = reserved_only(&spec);
    let plan = Plan::calculate(&spec, &observed, &STAGE1, 1);
    assert!(plan.is_empty(), "{}", plan.to_text(&observed));
    let public = observed.reservations[0].ip;
    let private = observed.reservations[1].ip;
    let records = &plan.user_dns.as_ref().unwrap().records;
    let values: Vec<&Vec<Value>> = records.iter().map(|r| &r.values).collect();
    assert_eq!(
        values,
        [
            &vec![Value::Ip(ip(BOOTSTRAP)), Value::Ip(private)],
            &vec![Value::Ip(ip(BOOTSTRAP)), Value::Ip(private)],
            &vec![Value::Ip(public)],
        ]
    );
    let text = plan.to_text(&observed);
    assert!(
        text.contains(&format!(
            "  private zone mycluster.example.com: api-int.mycluster.example.com A ttl 30 = {BOOTSTRAP}, {private}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "  public zone example.com: api.mycluster.example.com A ttl 30 = {public}\n"
        )),
        "{text}"
    );
    assert!(!text.contains("not reserved yet"), "{text}");
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(
        json["user_dns"]["records"][2]["values"],
        serde_json::json!([{"ip": public.to_string()}])
    );
}
