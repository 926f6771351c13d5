use super::*;

#[test]
fn every_aws_row_names_a_command_and_commands_parse_back() {
    for grant in AWS {
        assert!(!grant.commands.is_empty(), "{grant:?}");
        assert!(grant.action.contains(':'), "{grant:?}");
    }
    for c in Command::ALL {
        assert_eq!(Command::parse(c.as_str()), Some(c));
    }
    assert_eq!(Command::parse("teardown"), None);
}

#[test]
fn aws_grants_follow_the_plan_and_the_command() {
    let plan = AwsPlan {
        public_addresses: true,
        private_addresses: true,
        zones: vec![Some("Z1".into()), None],
        private_zone_written: true,
        ..AwsPlan::default()
    };
    let names = |commands: &[Command]| -> Vec<&str> {
        aws_grants(&plan, commands)
            .iter()
            .map(|g| g.action)
            .collect()
    };
    let teardown = names(&[Command::TeardownAll]);
    assert!(teardown.contains(&"ec2:ReleaseAddress"), "{teardown:?}");
    assert!(!teardown.contains(&"ec2:AllocateAddress"), "{teardown:?}");
    let run = names(&[Command::Run]);
    assert!(!run.contains(&"ec2:ReleaseAddress"), "{run:?}");
    assert!(run.contains(&"route53:ListHostedZonesByName"), "{run:?}");
    assert!(!run.contains(&"sts:AssumeRole"), "{run:?}");
    let publish = names(&[Command::PublishLbIps]);
    assert!(
        !publish.iter().any(|a| a.starts_with("route53:")),
        "{publish:?}"
    );
    assert!(names(&[Command::CapabilitiesApply]).is_empty());
    let private_only = AwsPlan {
        private_addresses: true,
        ..AwsPlan::default()
    };
    let run = aws_grants(&private_only, &[Command::Run]);
    assert!(!run.iter().any(|g| g.action == "ec2:AllocateAddress"));
}

#[test]
fn gcp_and_azure_rows_follow_the_command() {
    let both = BTreeSet::from([Scope::Public, Scope::Private]);
    let gcp = |zones: &[(&str, bool)], command| {
        gcp_wanted("p", "p", &both, zones, &[command], true)
            .remove("p")
            .unwrap_or_default()
    };
    let run = gcp(&[("p", true)], Command::Run);
    assert!(run.contains("dns.managedZones.list"), "{run:?}");
    assert!(run.contains("dns.resourceRecordSets.update"), "{run:?}");
    assert!(!run.contains("compute.addresses.delete"), "{run:?}");
    assert!(!run.contains("dns.resourceRecordSets.delete"), "{run:?}");
    let named = gcp(&[("p", false)], Command::Run);
    assert!(!named.contains("dns.managedZones.list"), "{named:?}");
    let teardown = gcp(&[("p", true)], Command::TeardownAll);
    assert!(teardown.contains("compute.addresses.deleteInternal"));
    assert!(
        !teardown.contains("compute.addresses.create"),
        "{teardown:?}"
    );
    assert!(!teardown.contains("dns.resourceRecordSets.create"));
    assert_eq!(
        gcp_permissions_of_call("addresses.insert"),
        [
            "compute.addresses.setLabels",
            "compute.addresses.create",
            "compute.addresses.createInternal",
            "compute.subnetworks.use"
        ]
    );

    let plan = AzurePlan {
        resource_group: "rg".into(),
        network_resource_group: "net".into(),
        base_domain_resource_group: "dns".into(),
        second_address: false,
        tags_api: true,
        writes: AzureWrites {
            public_ips: true,
            private_ips: true,
            public_record_types: vec![RecordType::A],
            private_record_types: vec![RecordType::A],
        },
    };
    let azure = |command| -> Vec<String> {
        azure_wanted(&plan, &[command])
            .into_iter()
            .flat_map(|(_, actions)| actions)
            .collect()
    };
    let run = azure(Command::Run);
    assert!(run.contains(&"Microsoft.Network/dnszones/read".to_string()));
    assert!(!run.iter().any(|a| a.ends_with("/delete")), "{run:?}");
    let teardown = azure(Command::TeardownAll);
    assert!(teardown.contains(&"Microsoft.Network/publicIPAddresses/delete".to_string()));
    assert!(
        !teardown.iter().any(|a| a.contains("virtualNetworks")),
        "{teardown:?}"
    );
    assert!(azure(Command::CapabilitiesApply).is_empty());
}

/// `publish --scope External` reserves the public addresses and writes the public record
/// set anew; `Internal` releases them and withdraws it. Neither touches the private
/// reservations.
#[test]
fn publish_reserves_and_releases_public_addresses_only() {
    let both = BTreeSet::from([Scope::Public, Scope::Private]);
    let gcp = gcp_wanted("p", "p", &both, &[("p", true)], &[Command::Publish], true)
        .remove("p")
        .unwrap_or_default();
    for needed in [
        "compute.addresses.create",
        "compute.addresses.setLabels",
        "compute.addresses.delete",
        "dns.resourceRecordSets.create",
        "dns.resourceRecordSets.delete",
    ] {
        assert!(gcp.contains(needed), "{needed}: {gcp:?}");
    }
    for unneeded in [
        "compute.addresses.createInternal",
        "compute.addresses.deleteInternal",
        "compute.subnetworks.use",
    ] {
        assert!(!gcp.contains(unneeded), "{unneeded}: {gcp:?}");
    }
    let plan = AzurePlan {
        resource_group: "rg".into(),
        writes: AzureWrites {
            public_ips: true,
            public_record_types: vec![RecordType::A],
            ..AzureWrites::default()
        },
        ..AzurePlan::default()
    };
    let azure: Vec<String> = azure_wanted(&plan, &[Command::Publish])
        .into_iter()
        .flat_map(|(_, actions)| actions)
        .collect();
    for verb in ["read", "write", "delete"] {
        let action = format!("Microsoft.Network/publicIPAddresses/{verb}");
        assert!(azure.contains(&action), "{action}: {azure:?}");
    }
}
