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
        let port = free_port()?;
        let mut cmd = python_script(venv, "moto_server.py", env);
        cmd.args(["-H", "127.0.0.1", "-p", &port.to_string()]);
        Self::start("moto", cmd, port, "/moto-api/").await
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
        let port = free_port()?;
        let mut cmd = python_script(venv, "ministack_server.py", env);
        cmd.env("BIND_HOST", "127.0.0.1")
            .env("GATEWAY_PORT", port.to_string())
            .env("IOT_MTLS_ENABLED", "0");
        Self::start("ministack", cmd, port, "/_ministack/ready").await
    }

    async fn start(
        name: &'static str,
        mut cmd: Command,
        port: u16,
        ready_path: &str,
    ) -> Result<Self> {
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("cannot start {name} ({cmd:?})"))?;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let emulator = Self { name, addr, child };
        emulator.wait_ready(ready_path).await?;
        Ok(emulator)
    }

    /// Waits for the readiness URL to answer 200. A process start cannot be watched for, so
    /// this is the one bounded retry loop, in test infrastructure only.
    async fn wait_ready(&self, path: &str) -> Result<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if get_status(self.addr, path).await == Some(200) {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        bail!("{} on {} not ready after 60 s", self.name, self.addr)
    }
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
