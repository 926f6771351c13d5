use bootstrap_agent::{cli, error, exit};
use std::io::{IsTerminal, Write};

/// One log event, written to stderr when dropped, with every registered secret replaced
/// (`bootstrap_cloud::redact`): the SDKs print credentials at debug and trace, so this must
/// hold whatever the filter lets through.
#[derive(Default)]
struct ScrubbedStderr(Vec<u8>);

impl Write for ScrubbedStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for ScrubbedStderr {
    fn drop(&mut self) {
        if self.0.is_empty() {
            return;
        }
        let text = String::from_utf8_lossy(&self.0);
        let _ = std::io::stderr()
            .lock()
            .write_all(bootstrap_cloud::redact::scrub(&text).as_bytes());
    }
}

fn main() {
    let cli = cli::Cli::parse_checked();
    tracing_subscriber::fmt()
        .with_writer(ScrubbedStderr::default)
        .with_ansi(std::io::stderr().is_terminal())
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("BOOTSTRAP_AGENT_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,aws=warn,hyper=warn")),
        )
        .init();
    // One TLS stack, one crypto provider, installed before any client is built.
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();

    let code = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => match rt.block_on(cli::run(cli)) {
            Ok(()) => exit::OK,
            Err(e) => {
                let chain = error::render_chain(&e);
                eprintln!("error: {}", bootstrap_cloud::redact::scrub(&chain));
                exit::code(&e)
            }
        },
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            exit::FAILED
        }
    };
    std::process::exit(code);
}
