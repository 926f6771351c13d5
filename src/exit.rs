//! Exit codes, documented in docs/operating.md, mapped from the error chain. At the top of the house,
//! next to `main`: it knows the error types of every layer, and no layer knows it.

use crate::error::{AwaitingDeletion, InputError, LockedError};

pub const OK: i32 = 0;
pub const FAILED: i32 = 1;
pub const INVALID_INPUT: i32 = 2;
pub const LOCKED: i32 = 3;
pub const GATE_TIMEOUT: i32 = 4;
pub const CORRUPT_JOURNAL: i32 = 5;
/// `capabilities filter|upgrade`: some manifest documents could not be read; each is named,
/// and every other object was decided (and printed, and written with `--out`).
pub const UNREADABLE_MANIFESTS: i32 = 6;

/// The process exit code for an error chain: the first cause with a code of its own wins;
/// everything else is an operational failure (1), which a re-run may fix.
pub fn code(err: &anyhow::Error) -> i32 {
    for cause in err.chain() {
        if cause.is::<InputError>()
            || cause.is::<crate::validate::InputErrors>()
            || cause.is::<crate::preflight::PreflightFailed>()
        {
            return INVALID_INPUT;
        }
        if cause.is::<LockedError>() || cause.is::<crate::day2::lease::LeaseHeld>() {
            return LOCKED;
        }
        if cause.is::<crate::journal::CorruptJournal>() {
            return CORRUPT_JOURNAL;
        }
        if cause.is::<crate::capabilities::UnreadableManifests>() {
            return UNREADABLE_MANIFESTS;
        }
        if cause.is::<crate::cluster::gate::GateTimeout>()
            || cause.is::<crate::cluster::wire::WireTimeout>()
            || cause.is::<crate::cluster::lb_controller::ControllerTimeout>()
            || cause.is::<AwaitingDeletion>()
        {
            return GATE_TIMEOUT;
        }
    }
    FAILED
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_manifests_exit_6() {
        let err = anyhow::Error::new(crate::capabilities::UnreadableManifests { count: 2 })
            .context("capabilities filter");
        assert_eq!(code(&err), UNREADABLE_MANIFESTS);
    }

    #[test]
    fn waiting_too_long_for_the_admins_deletion_exits_4_like_the_gate() {
        let err = anyhow::Error::new(AwaitingDeletion {
            after: std::time::Duration::from_secs(60),
            message: "delete svc/external-lb".into(),
        })
        .context("publish Internal");
        assert_eq!(code(&err), GATE_TIMEOUT);
    }
}
