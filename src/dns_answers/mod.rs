//! What DNS must answer and what it does answer: the record sets `api` / `api-int` must hold
//! at this point of the install (`records`, from the journal), the comparison of those with
//! what a zone or the host's resolver answers (`verdict`), and the wait until the user's DNS
//! answers them (`wait`). Below `daemon` and `cli`, which both wait and verify through it.

pub mod records;
pub mod verdict;
pub mod wait;

pub use records::{RecordsNow, expected_values, records_now};
pub use verdict::Verdict;
pub use wait::{DnsCheck, DnsWaitArgs, Pace};
