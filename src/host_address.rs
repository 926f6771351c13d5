//! `--bootstrap-second-address host`: the second address the cloud gave this host (a GCP
//! alias IP, an Azure secondary IP configuration) brought up on the interface that holds the
//! bootstrap IP, before DNS points at it.
//!
//! Neither cloud does it for the host: Azure hands a secondary IP configuration's address to
//! the VM only by DHCP for the primary one, and RHCOS runs no google-guest-agent to add an
//! alias IP's local route. Until the kernel owns the address, it drops what the cloud delivers
//! for it. `ip` (iproute2) is on every RHCOS host; it is run only when the address is not
//! local already, so a re-run changes nothing.

use anyhow::{Context, Result, bail};
use std::net::{IpAddr, UdpSocket};
use std::process::Command;

/// Brings `second` up next to `bootstrap`; false when it was local already.
pub fn ensure_local(second: IpAddr, bootstrap: IpAddr) -> Result<bool> {
    if is_local(second) {
        return Ok(false);
    }
    let device = device_of(bootstrap)?;
    let prefix = match second {
        IpAddr::V4(_) => 32,
        IpAddr::V6(_) => 128,
    };
    let address = format!("{second}/{prefix}");
    run(&["address", "add", &address, "dev", &device])?;
    if !is_local(second) {
        bail!(
            "{second} is still not an address of this host after `ip address add {address} dev {device}`"
        );
    }
    tracing::info!(%second, %device, "the bootstrap host's second address is up");
    Ok(true)
}

/// Whether the kernel owns `ip`: a socket binds to it only then.
fn is_local(ip: IpAddr) -> bool {
    UdpSocket::bind((ip, 0)).is_ok()
}

/// The interface holding `ip` (`ip -o address show to <ip>`: `2: eth0    inet 10.0.1.10/24 ...`).
fn device_of(ip: IpAddr) -> Result<String> {
    let out = run(&["-o", "address", "show", "to", &ip.to_string()])?;
    out.lines()
        .find_map(|line| line.split_whitespace().nth(1))
        .map(|d| d.trim_end_matches(':').to_string())
        .with_context(|| {
            format!(
                "no interface of this host holds the bootstrap IP {ip}: the second address goes next to it (is this the bootstrap host? else --bootstrap-second-address cloud or off)"
            )
        })
}

fn run(args: &[&str]) -> Result<String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .with_context(|| format!("cannot run `ip {}` (iproute2)", args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs in a network namespace of its own (`unshare -rn`, started by the test below),
    /// whose loopback holds the bootstrap IP (a container may have no dummy interfaces).
    #[test]
    #[ignore = "run by brings_the_second_address_up_next_to_the_bootstrap_ip in a namespace"]
    fn inside_namespace() {
        let bootstrap: IpAddr = "10.0.1.10".parse().unwrap();
        let second: IpAddr = "10.0.1.11".parse().unwrap();
        assert!(
            is_local(bootstrap),
            "the namespace's dummy holds the bootstrap IP"
        );
        assert!(!is_local(second));
        assert!(ensure_local(second, bootstrap).unwrap(), "added");
        assert!(is_local(second));
        assert!(
            !ensure_local(second, bootstrap).unwrap(),
            "a re-run adds nothing"
        );
        let shown = run(&["-o", "address", "show", "dev", "lo"]).unwrap();
        assert_eq!(shown.matches("10.0.1.11/32").count(), 1, "{shown}");
        let err =
            ensure_local("10.0.2.11".parse().unwrap(), "10.0.2.10".parse().unwrap()).unwrap_err();
        assert!(
            format!("{err:#}").contains("no interface of this host holds"),
            "{err:#}"
        );
    }

    /// The real iproute2 in a user and network namespace of our own: no root, nothing of the
    /// machine's network touched.
    #[test]
    fn brings_the_second_address_up_next_to_the_bootstrap_ip() {
        let exe = std::env::current_exe().unwrap();
        let script = format!(
            "ip link set lo up && ip address add 10.0.1.10/32 dev lo && exec '{}' host_address::tests::inside_namespace --exact --include-ignored --nocapture",
            exe.display()
        );
        let out = Command::new("unshare")
            .args(["-rn", "sh", "-c", &script])
            .output()
            .expect("unshare (util-linux) runs");
        assert!(
            out.status.success(),
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
