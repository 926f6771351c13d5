//! A third-party emulator process on a free loopback port, stopped when dropped.

use anyhow::{Context, Result, bail};
use std::net::{SocketAddr, TcpListener};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

pub struct Emulator {
    pub name: &'static str,
    pub addr: SocketAddr,
    child: Child,
}

/// The venv's python running `py/<script>` of this crate with `env` added.
fn python_script(venv: &Path, script: &str, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.envs(env.iter().copied()).arg(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("py")
            .join(script),
    );
    cmd
}

impl Emulator {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// moto for EC2, through `py/moto_server.py`: moto_server with ENI private IPs picked
    /// free and never AWS-reserved, as EC2 does (moto alone picks at random, collisions
    /// included).
    pub async fn moto(venv: &Path) -> Result<Self> {
        Self::moto_with(venv, &[]).await
    }

    /// [`Emulator::moto`] with settings of `py/moto_server.py` in its environment (e.g.
    /// `MOTO_VPC_MAX_ELASTIC_IPS`).
    pub async fn moto_with(venv: &Path, env: &[(&str, &str)]) -> Result<Self> {
        let command = |port: u16| {
            let mut cmd = python_script(venv, "moto_server.py", env);
            cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
            cmd
        };
        Self::start("moto", command, "/moto-api/", free_port).await
    }

    /// ministack for Route53 (exact-match DELETEs, like real Route53), through
    /// `py/ministack_server.py`: a CNAME and another type never share a name, as Route53
    /// refuses. Its IoT listener would bind 0.0.0.0:8883; it is switched off.
    pub async fn ministack(venv: &Path) -> Result<Self> {
        Self::ministack_with(venv, &[]).await
    }

    /// [`Emulator::ministack`] with settings of `py/ministack_server.py` in its environment
    /// (e.g. `MINISTACK_CHANGE_PROPAGATION_MS`: how long a change stays PENDING).
    pub async fn ministack_with(venv: &Path, env: &[(&str, &str)]) -> Result<Self> {
        let command = |port: u16| {
            let mut cmd = python_script(venv, "ministack_server.py", env);
            cmd.env("BIND_HOST", "127.0.0.1")
                .env("GATEWAY_PORT", port.to_string())
                .env("IOT_MTLS_ENABLED", "0");
            cmd
        };
        Self::start("ministack", command, "/_ministack/ready", free_port).await
    }

    /// Starts `command(port)` on a port from `pick_port` and waits until it serves there.
    ///
    /// A free port is free only when it is picked: tests running side by side can pick the
    /// same one, and then one emulator binds it and the other exits, while the loser's
    /// readiness probe is answered by the winner. Two tests would then share one cloud (and
    /// see each other's resources as their own), so the emulator counts as started only when
    /// the listening socket on its port is its own; otherwise it is stopped and started again
    /// on another port.
    async fn start(
        name: &'static str,
        command: impl Fn(u16) -> Command,
        ready_path: &str,
        mut pick_port: impl FnMut() -> Result<u16>,
    ) -> Result<Self> {
        const ATTEMPTS: usize = 5;
        for _ in 0..ATTEMPTS {
            let port = pick_port()?;
            let mut cmd = command(port);
            let child = cmd
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .with_context(|| format!("cannot start {name} ({cmd:?})"))?;
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let mut emulator = Self { name, addr, child };
            if emulator.wait_ready(ready_path).await? {
                return Ok(emulator);
            }
        }
        bail!("{name}: another process took each of {ATTEMPTS} free ports before it could bind")
    }

    /// Waits for the readiness URL to answer 200 from this emulator's own socket: true once
    /// it does, false when the port is another process's. A process start cannot be watched
    /// for, so this is the one bounded retry loop, in test infrastructure only.
    async fn wait_ready(&mut self, path: &str) -> Result<bool> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if self.child.try_wait()?.is_some() {
                return Ok(false);
            }
            if get_status(self.addr, path).await == Some(200) {
                return listens_on(self.child.id(), self.addr.port());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("{} on {} not ready after 60 s", self.name, self.addr)
    }
}

/// Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux's
/// `/proc/net/tcp` names the socket's inode; the process's fds link to `socket:[inode]`).
fn listens_on(pid: u32, port: u16) -> Result<bool> {
    let table = std::fs::read_to_string("/proc/net/tcp").context("reading /proc/net/tcp")?;
    let local = format!("0100007F:{port:04X}");
    let Some(inode) = table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        const LISTEN: &str = "0A";
        (fields.get(1) == Some(&local.as_str()) && fields.get(3) == Some(&LISTEN))
            .then(|| fields.get(9).map(|inode| format!("socket:[{inode}]")))
            .flatten()
    }) else {
        return Ok(false);
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .with_context(|| format!("reading /proc/{pid}/fd"))?;
    Ok(fds
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .any(|target| target.as_os_str() == inode.as_str()))
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

async fn get_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).await.ok()?;
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A port another process serves (answering 200 to anything, as a foreign moto would) is
    /// not taken for the emulator's: it starts again on the next port.
    #[tokio::test]
    async fn a_port_another_process_serves_is_not_taken_for_ours() {
        let foreign = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let taken = foreign.local_addr().unwrap().port();
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = foreign.accept().await else {
                    return;
                };
                let mut buf = [0u8; 1024];
                let _ = stream.read(&mut buf).await;
                let _ = stream
                    .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                    .await;
            }
        });
        let mut ports = vec![taken, free_port().unwrap()].into_iter();
        let command = |port: u16| {
            let mut cmd = Command::new("python3");
            cmd.args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                &port.to_string(),
            ]);
            cmd
        };
        let emulator = Emulator::start("http.server", command, "/", || {
            ports.next().context("no port left")
        })
        .await
        .unwrap();
        assert_ne!(
            emulator.addr.port(),
            taken,
            "the foreign server was taken for ours"
        );
        assert!(listens_on(emulator.child.id(), emulator.addr.port()).unwrap());
        assert!(!listens_on(emulator.child.id(), taken).unwrap());
    }
}
