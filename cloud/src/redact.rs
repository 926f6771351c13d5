//! Secrets that must never reach a log line, at any level.
//!
//! Our own types redact their `Debug`, but the SDKs' do not all: the AWS SDK traces its whole
//! config bag and every signing identity at debug and trace, and its `Credentials` prints the
//! access key id. That type cannot be wrapped (the SigV4 signer needs it as is). So every
//! credential the agent hands to an SDK, or gets back from one (AWS credential chain, Azure
//! tokens), is registered here, and the log writer passes each formatted line through
//! [`scrub`] before it reaches stderr. Registering is idempotent and cheap; the list holds a
//! handful of strings per process.

use std::borrow::Cow;
use std::sync::RwLock;

/// What a secret is replaced by.
pub const REDACTED: &str = "<redacted>";

/// Shorter strings are not registered: replacing them would mangle ordinary text, and no
/// credential is that short.
const MIN_LEN: usize = 8;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Registers `secret` (and the escaped forms `Debug` and JSON print, which differ when it has
/// quotes, backslashes or newlines, as a PEM key does) so that [`scrub`] removes it.
pub fn register(secret: &str) {
    if secret.len() < MIN_LEN {
        return;
    }
    let forms = [
        secret.to_string(),
        secret.escape_debug().to_string(),
        secret.escape_default().to_string(),
    ];
    let mut secrets = SECRETS.write().unwrap_or_else(|p| p.into_inner());
    for form in forms {
        if !secrets.contains(&form) {
            secrets.push(form);
        }
    }
    // Longest first, so a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// `text` with every registered secret replaced by [`REDACTED`].
pub fn scrub(text: &str) -> Cow<'_, str> {
    let secrets = SECRETS.read().unwrap_or_else(|p| p.into_inner());
    let mut out = Cow::Borrowed(text);
    for secret in secrets.iter() {
        if out.contains(secret.as_str()) {
            out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_scrubbed_in_every_printed_form() {
        register("AKIAREDACTTEST000001");
        register("-----BEGIN KEY-----\nredact-test-\"key\"\n-----END KEY-----\n");
        register("short");
        let line = format!(
            "Credentials {{ access_key_id: \"AKIAREDACTTEST000001\" }} key={:?} json={}",
            "-----BEGIN KEY-----\nredact-test-\"key\"\n-----END KEY-----\n",
            serde_json_like("-----BEGIN KEY-----\nredact-test-\"key\"\n-----END KEY-----\n")
        );
        let clean = scrub(&line);
        assert!(!clean.contains("AKIAREDACTTEST000001"), "{clean}");
        assert!(!clean.contains("redact-test"), "{clean}");
        assert!(clean.contains("access_key_id: \"<redacted>\""), "{clean}");
        assert_eq!(scrub("short and harmless"), "short and harmless");
    }

    /// JSON string escaping of quotes, backslashes and newlines (what `escape_default` covers).
    fn serde_json_like(s: &str) -> String {
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    }
}
