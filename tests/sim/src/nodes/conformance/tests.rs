use super::*;

fn spec(cloud: Cloud, role: Role, design: Design) -> NodeSpec {
    node_specs(cloud, design)
        .into_iter()
        .find(|s| s.role == role)
        .unwrap()
}

fn verdict(t: &Table, stage: u8, local: Local, target: &str) -> OnHost {
    *t.iter()
        .find(|(c, _)| c.stage == stage && c.local == local && c.target == target)
        .unwrap_or_else(|| panic!("no cell {stage} {local:?} {target}"))
        .1
}

/// Each (local state, target, verdict) holds in stages 1, 2 and 3.
fn assert_in_every_stage(t: &Table, expected: &[(Local, &str, OnHost)]) {
    for stage in 1..=3 {
        for (local, target, on_host) in expected {
            assert_eq!(
                verdict(t, stage, *local, target),
                *on_host,
                "stage {stage}, {local:?}, {target}"
            );
        }
    }
}

#[test]
fn the_constants_are_addresses() {
    for s in [
        BOOTSTRAP_IP,
        SECOND_ADDRESS,
        INTERNAL_VIP,
        PUBLIC_IP,
        MASTER_IP,
        WORKER_IP,
    ] {
        assert!(s.parse::<IpAddr>().is_ok(), "{s}");
    }
}

#[test]
fn every_role_measures_every_target_in_every_stage_and_local_state() {
    let specs = node_specs(Cloud::Gcp, Design::SecondAddress);
    assert_eq!(specs.len(), 3);
    let cells: usize = specs
        .iter()
        .map(|s| model_table(s, Design::SecondAddress).len())
        .sum();
    // 4 targets x 3 stages x (master 2 + bootstrap 1 + worker 1) local states.
    assert_eq!(cells, 4 * 3 * 4);
    let master = spec(Cloud::Gcp, Role::Master, Design::SecondAddress);
    assert_eq!(master.forwarded.len(), 2, "internal VIP and public IP");
    let bootstrap = spec(Cloud::Gcp, Role::Bootstrap, Design::SecondAddress);
    assert_eq!(
        bootstrap.forwarded,
        [ip(INTERNAL_VIP)],
        "the reused master group"
    );
    assert!(
        spec(Cloud::Azure, Role::Master, Design::SecondAddress)
            .forwarded
            .is_empty()
    );
}

/// G1 with today's watcher: it took the bootstrap addresses, so nothing ever marks our VIP
/// down and a master whose kube-apiserver is down refuses its own connection in every stage.
#[test]
fn the_model_refuses_a_gcp_masters_own_vip_while_its_apiserver_is_down_in_every_stage() {
    let s = spec(Cloud::Gcp, Role::Master, Design::SecondAddress);
    let t = model_table(&s, Design::SecondAddress);
    assert_in_every_stage(
        &t,
        &[
            (Local::Down, "internal-vip", OnHost::Refused),
            (Local::Up, "internal-vip", OnHost::Served),
            (Local::Up, "bootstrap-ip", OnHost::Leaves),
        ],
    );
    // All at once the watcher knows the VIP: marked down, the connection leaves (to OVN-K).
    let s = spec(Cloud::Gcp, Role::Master, Design::AllAtOnce);
    let t = model_table(&s, Design::AllAtOnce);
    assert_eq!(verdict(&t, 3, Local::Down, "internal-vip"), OnHost::Leaves);
}

/// A1 with today's watcher: the bootstrap host's addresses are marked up and redirected to
/// the master itself, all through the hand-over.
#[test]
fn the_model_keeps_azure_masters_off_the_bootstrap_host_while_their_apiserver_is_up() {
    let s = spec(Cloud::Azure, Role::Master, Design::SecondAddress);
    let t = model_table(&s, Design::SecondAddress);
    assert_in_every_stage(
        &t,
        &[
            (Local::Up, "bootstrap-ip", OnHost::Served),
            (Local::Down, "bootstrap-ip", OnHost::Leaves),
            (Local::Up, "second-address", OnHost::Served),
            (Local::Down, "second-address", OnHost::Leaves),
            (Local::Up, "internal-vip", OnHost::Leaves),
        ],
    );
}

#[test]
fn the_bootstrap_host_serves_its_own_addresses_and_sends_the_rest_out() {
    let s = spec(Cloud::Gcp, Role::Bootstrap, Design::SecondAddress);
    let t = model_table(&s, Design::SecondAddress);
    assert_eq!(verdict(&t, 1, Local::Up, "bootstrap-ip"), OnHost::Served);
    assert_eq!(verdict(&t, 1, Local::Up, "second-address"), OnHost::Served);
    assert_eq!(verdict(&t, 1, Local::Up, "internal-vip"), OnHost::Leaves);
}

#[test]
fn compare_names_every_cell_that_differs_or_is_missing() {
    let s = spec(Cloud::Azure, Role::Master, Design::SecondAddress);
    let model = model_table(&s, Design::SecondAddress);
    assert!(compare(&model, &model).is_empty());
    let mut real = model.clone();
    let first = *real.keys().next().unwrap();
    let last = *real.keys().last().unwrap();
    real.insert(first, OnHost::Refused);
    real.remove(&last);
    let found = compare(&model, &real);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found.iter().any(|m| m.cell == last && m.real.is_none()));
    assert!(
        found
            .iter()
            .any(|m| m.cell == first && m.real == Some(OnHost::Refused))
    );
    let json = mismatch_json(&found[0]);
    assert!(json["model"].is_string() && json["role"] == "master");
}

/// Shaped like MCO's file templates (our own text, not MCO's).
const TEMPLATE: &str = "mode: 0755\npath: \"/opt/libexec/example.sh\"\ncontents:\n  inline: |\n    #!/bin/bash\n    set -e\n    echo \"$1\"\n";

#[test]
fn the_script_is_the_templates_inline_contents() {
    let script = script_from_template(TEMPLATE, "t.yaml").unwrap();
    assert_eq!(script, "#!/bin/bash\nset -e\necho \"$1\"\n");
    let templated = TEMPLATE.replace("echo", "echo {{.Infra.Status.PlatformStatus}}");
    let err = script_from_template(&templated, "t.yaml").unwrap_err();
    assert!(format!("{err}").contains("Go template"), "{err}");
    let err = script_from_template("mode: 0644\n", "t.yaml").unwrap_err();
    assert!(
        format!("{err}").contains("t.yaml: no contents.inline"),
        "{err}"
    );
    let err = script_from_template("contents:\n  inline: hello\n", "t.yaml").unwrap_err();
    assert!(format!("{err}").contains("not a script"), "{err}");
}

#[test]
fn designs_parse_by_name() {
    assert_eq!(
        Design::parse("second-address").unwrap(),
        Design::SecondAddress
    );
    assert_eq!(Design::parse("all-at-once").unwrap(), Design::AllAtOnce);
    assert!(Design::parse("both").is_err());
}

/// The two designs that keep the bootstrap host's addresses out of the watchers' VIPs: on
/// Azure no master redirects the bootstrap IP; on GCP the watcher on the VIP marks it down.
#[test]
fn the_model_with_the_bootstrap_ip_out_of_the_watchers_view() {
    let d = Design::SecondAddressAlone;
    let t = model_table(&spec(Cloud::Azure, Role::Master, d), d);
    assert_in_every_stage(
        &t,
        &[
            (Local::Up, "bootstrap-ip", OnHost::Leaves),
            (Local::Up, "second-address", OnHost::Served),
        ],
    );
    let d = Design::WatcherOnVip;
    let t = model_table(&spec(Cloud::Gcp, Role::Master, d), d);
    assert_eq!(verdict(&t, 3, Local::Down, "internal-vip"), OnHost::Leaves);
    let t = model_table(&spec(Cloud::Azure, Role::Master, d), d);
    assert_eq!(verdict(&t, 1, Local::Up, "bootstrap-ip"), OnHost::Leaves);
    assert_eq!(verdict(&t, 1, Local::Up, "internal-vip"), OnHost::Served);
}
