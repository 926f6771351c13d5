//! User-managed DNS with `--dns-wait`, written once for every cloud: the agent prints the
//! records and waits; the test, as the user, creates them late through the cloud's DNS (the
//! peers' writer), and the agent moves on. A wrong value keeps it waiting until the step
//! deadline ends it (exit 1, naming what is missing). Driven by what the agent prints, never
//! by the clock.

use super::cloud::{Cloud, CloudWorld};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader, Lines};

/// What `dns records --output json` says the zone must hold: (private, fqdn, values).
async fn records_to_create<C: Cloud>(
    h: &super::cloud::Harness<C>,
) -> Vec<(bool, String, Vec<String>)> {
    let out = h
        .run(&["dns", "records", "--dns", "manual", "--output", "json"])
        .await;
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["written_by"], "user", "{json:#}");
    json["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["type"] == "A")
        .map(|r| {
            (
                r["visibility"] == "private",
                r["name"].as_str().unwrap().to_string(),
                super::agent::strings(&r["values"]),
            )
        })
        .collect()
}

type StdoutLines = Lines<BufReader<tokio::process::ChildStdout>>;

/// Reads `lines` up to and including the first that contains `needle`: the lines read, and
/// whether it came (not: the stream ended first).
async fn read_until<R: AsyncRead + Unpin>(
    lines: &mut Lines<BufReader<R>>,
    needle: &str,
) -> (Vec<String>, bool) {
    let mut seen = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        let found = line.contains(needle);
        seen.push(line);
        if found {
            return (seen, true);
        }
    }
    (seen, false)
}

/// The user writes each of `records`, (private, fqdn, values), with the values it `keep`s.
async fn write_records<C: Cloud>(
    peers: &C,
    records: &[(bool, String, Vec<String>)],
    keep: impl Fn(&str) -> bool,
) {
    for (is_private, name, values) in records {
        let kept: Vec<&str> = values
            .iter()
            .map(String::as_str)
            .filter(|v| keep(v))
            .collect();
        peers.write_record(*is_private, name, &kept).await;
    }
}

/// Starts `args` and reads its stdout until a line contains `marker` (the agent printed the
/// records and is waiting); returns the child, the rest of its stdout and the lines read.
async fn spawn_until<C: Cloud>(
    h: &super::cloud::Harness<C>,
    args: &[&str],
    marker: &str,
) -> (tokio::process::Child, StdoutLines, Vec<String>) {
    let mut child = h
        .command(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (seen, printed) = read_until(&mut lines, marker).await;
    if printed {
        return (child, lines, seen);
    }
    let out = child.wait_with_output().await.unwrap();
    panic!(
        "{args:?} ended before printing {marker:?}: {seen:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The rest of the child's stdout, and its exit code.
async fn finish(mut child: tokio::process::Child, mut lines: StdoutLines) -> (Option<i32>, String) {
    let mut rest = Vec::new();
    while let Some(line) = lines.next_line().await.unwrap() {
        rest.push(line);
    }
    let status = child.wait().await.unwrap();
    (status.code(), rest.join("\n"))
}

/// Reads the child's stderr until a line contains `needle` (the agent saw that state).
async fn stderr_until(child: &mut tokio::process::Child, needle: &str) -> Vec<String> {
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (seen, found) = read_until(&mut lines, needle).await;
    assert!(found, "stderr ended before {needle:?}: {seen:?}");
    // Keep draining so the agent never blocks on a full pipe.
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    seen
}

/// `dns seed --dns manual --dns-wait`: prints the records, waits while the zone lacks them or
/// answers a wrong value, and moves on (exit 0) once the user created them; then `dns teardown
/// --dns-wait` waits until the user took the bootstrap IP out. No record is written by the agent.
pub async fn with_dns_wait_the_agent_moves_on_once_a_late_writer_created_the_records<C: Cloud>() {
    let h = C::start().await;
    h.run(&["reserve", "--dns", "manual"]).await;
    let records = records_to_create(&h).await;
    let private: Vec<_> = records.iter().filter(|r| r.0).collect();
    assert!(!private.is_empty(), "{records:?}");
    let seed = ["dns", "seed", "--dns", "manual", "--dns-wait"];
    let (mut child, stdout, printed) = spawn_until(&h, &seed, "seed-dns: done").await;
    let printed = printed.join("\n");
    for (_, name, values) in &records {
        assert!(printed.contains(name.as_str()), "{name} printed: {printed}");
        assert!(
            printed.contains(&values.join(", ")),
            "{values:?}: {printed}"
        );
    }
    // The user first types a wrong value into api-int (and nothing else yet): still waiting.
    let (_, api_int, wanted) = private
        .iter()
        .find(|r| r.1.starts_with("api-int."))
        .unwrap();
    h.peers.write_record(true, api_int, &["10.0.9.9"]).await;
    stderr_until(&mut child, "another writer's) 10.0.9.9").await;
    // Then creates every record as printed.
    write_records(&h.peers, &records, |_| true).await;
    let (code, stdout) = finish(child, stdout).await;
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("seed-dns: your DNS answers the records"),
        "{stdout}"
    );
    assert_eq!(
        h.status().await["user_dns"].as_array().map(Vec::len),
        Some(records.len())
    );
    // The bootstrap host's second address (GCP, Azure) was printed with the bootstrap IP.
    let second = second_address(&h).await;
    assert_eq!(second.is_some(), C::SECOND_ADDRESS);
    assert_eq!(h.world().await.second_address(), second, "the host's");
    if let Some(second) = &second {
        assert!(wanted.contains(second), "{wanted:?}");
    }
    // Stage 3: the agent waits until the bootstrap IP, and then the second address, are out
    // of api and api-int.
    let teardown = ["dns", "teardown", "--dns", "manual", "--dns-wait"];
    let (mut child, stdout, _) = spawn_until(&h, &teardown, "remove-bootstrap: done").await;
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines();
    line_with(&mut stderr, "still answers").await;
    write_records(&h.peers, &records, |v| v != C::BOOTSTRAP_IP).await;
    if let Some(second) = &second {
        // Still waiting, for the second address alone now (it was released: it must go).
        line_with(
            &mut stderr,
            &format!("the bootstrap host's second address {second} still answers"),
        )
        .await;
        write_records(&h.peers, &records, |v| v != C::BOOTSTRAP_IP && v != second).await;
    }
    tokio::spawn(async move { while let Ok(Some(_)) = stderr.next_line().await {} });
    let (code, stdout) = finish(child, stdout).await;
    assert_eq!(code, Some(0), "{stdout}");
    // Azure's api-int holds the second address without the bootstrap IP (issue 42).
    assert_eq!(
        wanted.contains(&C::BOOTSTRAP_IP.to_string()),
        !C::API_INT_WITHOUT_BOOTSTRAP_IP,
        "{wanted:?}"
    );
    assert_eq!(h.world().await.second_address(), None, "released");
    // `dns verify` reads the same zone: what must hold now, answered.
    let verify = h.run(&["dns", "verify", "--dns", "manual"]).await;
    let text = String::from_utf8_lossy(&verify.stdout);
    assert!(text.contains(&format!("{api_int} A: ok (")), "{text}");
}

/// A wrong value the user never fixes: the agent waits until the step deadline, then exits 1
/// naming the record and the value missing; it journaled no mutation.
pub async fn with_dns_wait_a_wrong_value_keeps_it_waiting_until_the_deadline<C: Cloud>() {
    let h = C::start().await;
    h.run(&["reserve", "--dns", "manual"]).await;
    let records = records_to_create(&h).await;
    for (is_private, name, _) in &records {
        h.peers.write_record(*is_private, name, &["10.0.9.9"]).await;
    }
    h.peers.reset_counts();
    let out = h
        .command(&[
            "dns",
            "seed",
            "--dns",
            "manual",
            "--dns-wait",
            "--step-timeout",
            "4s",
        ])
        .output()
        .await
        .unwrap();
    let (code, stderr) = (out.status.code(), String::from_utf8_lossy(&out.stderr));
    assert_eq!(code, Some(1), "{stderr}");
    for named in [
        "your DNS did not answer within the step deadline (4s)",
        "MISSING",
        C::BOOTSTRAP_IP,
    ] {
        assert!(stderr.contains(named), "{named}: {stderr}");
    }
    assert!(
        h.peers.mutating_calls().is_empty(),
        "waiting writes nothing: {:?}",
        h.peers.mutating_calls()
    );
}

/// The bootstrap host's second address the journal says was seeded (`status`).
async fn second_address<C: Cloud>(h: &super::cloud::Harness<C>) -> Option<String> {
    h.status().await["bootstrap_second_address"]
        .as_str()
        .map(str::to_string)
}

/// Reads `lines` until one contains `needle`.
async fn line_with(lines: &mut Lines<BufReader<tokio::process::ChildStderr>>, needle: &str) {
    let (seen, found) = read_until(lines, needle).await;
    assert!(found, "stderr ended before {needle:?}: {seen:#?}");
}

/// The A records `status` says the user must hold: (private, fqdn, values).
fn user_records(status: &Value) -> Vec<(bool, String, Vec<String>)> {
    status["user_dns"]
        .as_array()
        .unwrap_or_else(|| panic!("no user_dns: {status:#}"))
        .iter()
        .filter_map(|r| {
            let name = r["record"].as_str()?.strip_suffix(" A")?;
            let private = r["zone"].as_str()?.starts_with("private ");
            Some((
                private,
                name.to_string(),
                super::agent::strings(&r["values"]),
            ))
        })
        .collect()
}

/// `run --dns manual --dns-wait` (`h` has its `run` flags): it waits for the user's records
/// after seeding and for the bootstrap IP's removal after the gate, each time telling what it
/// waits for; the test writes them only once told, and `run` reaches `done`.
pub async fn run_with_dns_wait_waits_for_the_user_at_seed_and_at_removal<C: Cloud>(
    h: &super::cloud::Harness<C>,
) {
    let mut child = h
        .command(&["run", "--dns", "manual", "--dns-wait"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    line_with(&mut lines, "waiting for your DNS (seed-dns)").await;
    let records = user_records(&h.status().await);
    assert!(!records.is_empty());
    write_records(&h.peers, &records, |_| true).await;
    line_with(&mut lines, "waiting for your DNS (remove-bootstrap)").await;
    assert_ne!(h.status().await["run_step"], "done");
    // Both of the bootstrap host's addresses go (GCP, Azure: the second one was released).
    let second = second_address(h).await;
    assert_eq!(second.is_some(), C::SECOND_ADDRESS);
    write_records(&h.peers, &records, |v| {
        v != C::BOOTSTRAP_IP && Some(v) != second.as_deref()
    })
    .await;
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let exit = child.wait().await.unwrap();
    assert!(exit.success(), "run: {exit:?}");
    assert_eq!(h.status().await["run_step"], "done");
}
