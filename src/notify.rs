//! What the agent tells systemd when it runs as a `Type=notify` unit: the `STATUS=` line that
//! `systemctl status` shows, and `READY=1`. A leaf of the house, so that whatever waits (the
//! runner for the cloud to let go of an IP, the gate, the drain, `publish`) can say what it
//! waits for without knowing the daemon that walks the steps. Outside systemd (no
//! `NOTIFY_SOCKET`) both are no-ops.

/// Tells systemd (when started by it) what is happening; a no-op otherwise.
pub fn status(line: &str) {
    // Only shown to a person: a line systemd did not take is no reason to stop a step.
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Status(line)]);
}

/// Tells systemd the unit is ready: units ordered after it may start.
pub fn ready() {
    let _ = sd_notify::notify(&[sd_notify::NotifyState::Ready]);
}
