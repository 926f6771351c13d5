//! Every problem of the asset dir, not only the first: each part of the loader reads what it
//! can, keeps the problem of what it cannot, and goes on; a part that needs another waits
//! until that one is sound.

use super::FieldError;
use crate::error::InputError;

/// A problem of one field.
pub(super) trait Problem {
    /// Whether both name the same field (said once, though two rules read it).
    fn same_field(&self, other: &Self) -> bool;
    /// What stands in should a part be unbuilt with no problem said (see `or_build`).
    fn unread() -> Self;
}

impl Problem for InputError {
    fn same_field(&self, other: &Self) -> bool {
        self.file == other.file && self.field == other.field
    }

    fn unread() -> Self {
        InputError::new("(asset dir)", "(document)", "cannot be read")
    }
}

impl Problem for FieldError {
    fn same_field(&self, other: &Self) -> bool {
        self.0 == other.0
    }

    fn unread() -> Self {
        ("platform".to_string(), "cannot be read".to_string())
    }
}

/// The problems found so far.
pub(super) struct Problems<E>(Vec<E>);

impl<E> Default for Problems<E> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<E: Problem> Problems<E> {
    pub(super) fn push(&mut self, e: E) {
        if !self.0.iter().any(|seen| seen.same_field(&e)) {
            self.0.push(e);
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The value, or None with its problem kept.
    pub(super) fn take<T>(&mut self, result: Result<T, E>) -> Option<T> {
        self.take_all(result.map_err(|e| vec![e]))
    }

    pub(super) fn take_all<T>(&mut self, result: Result<T, Vec<E>>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(all) => {
                all.into_iter().for_each(|e| self.push(e));
                None
            }
        }
    }

    /// Every problem, if there is one; else the value `build` makes of what was read.
    /// `build` gives None only when a part it needs was refused, which left a problem.
    pub(super) fn or_build<T>(self, build: impl FnOnce() -> Option<T>) -> Result<T, Vec<E>> {
        if !self.0.is_empty() {
            return Err(self.0);
        }
        build().ok_or_else(|| vec![E::unread()])
    }

    pub(super) fn into_vec(self) -> Vec<E> {
        self.0
    }
}
