use bootstrap_agent::{cli, error, exit};
use clap::Parser;
use std::io::IsTerminal;

fn main() {
    let cli = cli::Cli::parse();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
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
                eprintln!("error: {}", error::render_chain(&e));
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
