//! `dns seed|teardown|verify|records`: the DNS commands. Seeding and removal are steps of the
//! plan (run as `reserve` is); `verify` and `records` read and compare (`dns_answers`).

use super::{Common, Output};
use crate::context::{Cloud, Reading};
use crate::dns_answers::{
    DnsCheck, DnsWaitArgs, expected_values, records, records_now, verdict, wait,
};
use crate::options;
use crate::output;
use crate::plan::Step;
use anyhow::{Result, bail};
use clap::Subcommand;

#[derive(Debug, Subcommand)]
pub enum DnsCommand {
    /// api (public) -> reserved public IPs; api, api-int (private) -> bootstrap IP + reserved private IPs.
    Seed {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        wait: DnsWaitArgs,
    },
    /// Remove only the bootstrap IP from api / api-int.
    Teardown {
        #[command(flatten)]
        common: Common,
        #[command(flatten)]
        wait: DnsWaitArgs,
    },
    /// Ask the zones whether the records hold what the journal says we wrote (and no longer
    /// the bootstrap IP once it was removed); print the difference, exit 1 when there is one.
    Verify {
        #[command(flatten)]
        common: Common,
        /// Whose view counts: the zone as the cloud's DNS API answers, or the host's resolver.
        #[arg(
            long,
            env = "BOOTSTRAP_AGENT_DNS_CHECK",
            default_value = "zone",
            value_parser = options::one_of(DnsCheck::Zone)
        )]
        dns_check: DnsCheck,
    },
    /// Print the record sets api / api-int must hold at this point of the install (from the
    /// journal): to create or change with user-managed DNS, what the agent writes otherwise.
    Records {
        #[command(flatten)]
        common: Common,
    },
}

pub async fn command(command: DnsCommand) -> Result<()> {
    match command {
        DnsCommand::Seed { common, wait } => {
            super::steps(&common, &[Step::SeedDns], Some(&wait), None).await
        }
        DnsCommand::Teardown { common, wait } => {
            super::steps(&common, &[Step::RemoveBootstrap], Some(&wait), None).await
        }
        DnsCommand::Verify { common, dns_check } => verify(&common, dns_check).await,
        DnsCommand::Records { common } => records(&common).await,
    }
}

async fn verify(common: &Common, check: DnsCheck) -> Result<()> {
    let reading = Reading::new(common, Cloud::Observe).await?;
    let (spec, recorded) = (&reading.spec, &reading.recorded);
    let user_managed = spec.user_managed_dns().is_some();
    if !user_managed && recorded.records.is_empty() {
        return output::write_stdout(
            "nothing to verify: the journal holds no record values of ours\n",
        );
    }
    let verdicts = match (user_managed, check) {
        // Cloud DNS, the zone's view: what observation reads, against what we wrote.
        (false, DnsCheck::Zone) => verdict::compare(recorded, &reading.observe().await?),
        // User-managed DNS: the records as they must be now (`dns records`); or our values
        // as the host's resolver answers them.
        _ => {
            let records = records_now(spec, recorded);
            let view = wait::view(check, reading.providers.dns.as_ref());
            let read = wait::read(&records, view.as_ref()).await;
            if let Some(e) = read.values().find_map(|r| r.as_ref().err()) {
                return Err(anyhow::Error::new(e.clone()).context("reading the records"));
            }
            let removed = verdict::Removed::of(recorded, spec.bootstrap_ip);
            let expected = if user_managed {
                expected_values(&records)
            } else {
                recorded.records.clone()
            };
            wait::verdicts(&expected, &removed, &read)
        }
    };
    match common.output {
        Output::Text => output::write_stdout(&verdict::to_text(&verdicts))?,
        other => output::data(other, &verdicts)?,
    }
    let differing = verdicts.iter().filter(|v| !v.ok()).count();
    if differing > 0 {
        let against = if user_managed {
            "the records you must hold now (`dns records`)"
        } else {
            "the journal"
        };
        bail!("{differing} record set(s) differ from {against}");
    }
    Ok(())
}

async fn records(common: &Common) -> Result<()> {
    let reading = Reading::new(common, Cloud::Observe).await?;
    match common.output {
        Output::Text => output::write_stdout(&records::to_text(&reading.spec, &reading.recorded)),
        other => output::data(other, &records::report(&reading.spec, &reading.recorded)),
    }
}
