//! Progress of a long wait (the readiness gate, the proof on the wire) for the person watching
//! `run`: on a terminal, one live line on stderr redrawn in place with the elapsed time
//! (`waiting for the gate: 1/2 Services ready (api: no endpoint) 1m12s`); otherwise (a pipe,
//! the journal of systemd) one plain line each time what it waits for changes, so a log
//! holds no escape codes and no line per tick.

use crate::cluster::gate::ServiceGate;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// PURE: an elapsed time as a person reads it: `7s`, `1m12s`, `1h02m05s`.
pub fn elapsed_text(elapsed: Duration) -> String {
    let secs = elapsed.as_secs();
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    match (h, m) {
        (0, 0) => format!("{s}s"),
        (0, _) => format!("{m}m{s:02}s"),
        _ => format!("{h}h{m:02}m{s:02}s"),
    }
}

/// PURE: what the gate waits for: how many Services are ready, and why each other is not.
pub fn gate_text(services: &[ServiceGate]) -> String {
    let ready = services.iter().filter(|s| s.ready).count();
    let waiting: Vec<String> = services
        .iter()
        .filter(|s| !s.ready)
        .map(|s| format!("{}: {}", s.name, s.reason))
        .collect();
    let mut text = format!(
        "waiting for the gate: {ready}/{} Services ready",
        services.len()
    );
    if !waiting.is_empty() {
        text.push_str(&format!(" ({})", waiting.join("; ")));
    }
    text
}

/// PURE: one live line: the text and the elapsed time, erasing what the last draw left
/// (`\r` + erase line), without a newline.
pub fn live_line(text: &str, elapsed: Duration) -> String {
    format!("\r\x1b[2K{text} {}", elapsed_text(elapsed))
}

struct State<W> {
    out: W,
    text: Option<String>,
    started: Instant,
    live: bool,
}

/// A wait's progress on `W` (stderr in `run`). Cloneable handle; `finish` ends it.
pub struct Progress<W: Write + Send + 'static> {
    state: Arc<Mutex<State<W>>>,
    ticker: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Progress<std::io::Stderr> {
    /// On stderr: live when stderr is a terminal.
    pub fn stderr() -> Self {
        use std::io::IsTerminal;
        let err = std::io::stderr();
        let live = err.is_terminal();
        Self::new(err, live)
    }
}

impl<W: Write + Send + 'static> Progress<W> {
    /// `live`: redraw one line in place, and once a second so the elapsed time moves.
    pub fn new(out: W, live: bool) -> Self {
        let state = Arc::new(Mutex::new(State {
            out,
            text: None,
            started: Instant::now(),
            live,
        }));
        let ticker = live.then(|| {
            let state = state.clone();
            tokio::spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_secs(1));
                loop {
                    tick.tick().await;
                    draw(&state);
                }
            })
        });
        Self {
            state,
            ticker: Mutex::new(ticker),
        }
    }

    /// What the wait is waiting for now. A plain output gets a line only when it changed.
    pub fn update(&self, text: String) {
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if s.text.as_deref() == Some(text.as_str()) {
            return;
        }
        s.text = Some(text);
        drop(s);
        if self.is_live() {
            draw(&self.state);
        } else {
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let line = format!(
                "{} ({})\n",
                s.text.as_deref().unwrap_or(""),
                elapsed_text(s.started.elapsed())
            );
            // Progress is a courtesy: a closed stderr must not stop the wait.
            let _ = s.out.write_all(line.as_bytes());
        }
    }

    fn is_live(&self) -> bool {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).live
    }

    /// Ends the wait: the live line is erased (the log says what happened). Also on drop.
    pub fn finish(&self) {
        let ticker = self.ticker.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(ticker) = ticker {
            ticker.abort();
            let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
            let _ = s.out.write_all(b"\r\x1b[2K");
            let _ = s.out.flush();
        }
    }
}

impl<W: Write + Send + 'static> Drop for Progress<W> {
    fn drop(&mut self) {
        self.finish();
    }
}

fn draw<W: Write>(state: &Mutex<State<W>>) {
    let mut s = state.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(text) = s.text.clone() {
        let line = live_line(&text, s.started.elapsed());
        let _ = s.out.write_all(line.as_bytes());
        let _ = s.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink the test can read after the progress wrote to it.
    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Sink {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    fn service(name: &str, ready: bool, reason: &str) -> ServiceGate {
        ServiceGate {
            ready,
            reason: reason.into(),
            ..ServiceGate::not_evaluated("openshift-kube-apiserver", name)
        }
    }

    #[test]
    fn elapsed_time_reads_as_seconds_minutes_and_hours() {
        assert_eq!(elapsed_text(Duration::from_millis(7_900)), "7s");
        assert_eq!(elapsed_text(Duration::from_secs(72)), "1m12s");
        assert_eq!(elapsed_text(Duration::from_secs(60)), "1m00s");
        assert_eq!(elapsed_text(Duration::from_secs(3725)), "1h02m05s");
    }

    #[test]
    fn the_gate_line_counts_ready_services_and_says_why_the_others_wait() {
        let services = [
            service("api-int", true, "ready"),
            service("api", false, "no endpoint"),
        ];
        assert_eq!(
            gate_text(&services),
            "waiting for the gate: 1/2 Services ready (api: no endpoint)"
        );
        assert_eq!(
            live_line(&gate_text(&services), Duration::from_secs(72)),
            "\r\x1b[2Kwaiting for the gate: 1/2 Services ready (api: no endpoint) 1m12s"
        );
        assert_eq!(
            gate_text(&services[..1]),
            "waiting for the gate: 1/1 Services ready"
        );
    }

    /// What a progress shows for these updates, then finished; `terminal`: a live line.
    fn shown(terminal: bool, updates: &[&str]) -> String {
        let sink = Sink::default();
        let progress = Progress::new(sink.clone(), terminal);
        for text in updates {
            progress.update(text.to_string());
        }
        progress.finish();
        sink.text()
    }

    #[tokio::test]
    async fn off_a_terminal_each_change_is_one_plain_line() {
        let text = shown(false, &["waiting for a", "waiting for a", "waiting for b"]);
        assert_eq!(text.lines().count(), 2, "{text:?}");
        assert!(
            text.starts_with("waiting for a (0s)\nwaiting for b ("),
            "{text:?}"
        );
        assert!(!text.contains('\x1b') && !text.contains('\r'), "{text:?}");
    }

    #[tokio::test]
    async fn on_a_terminal_the_line_is_redrawn_in_place_and_erased_at_the_end() {
        let text = shown(true, &["waiting for a", "waiting for b"]);
        assert!(!text.contains('\n'), "{text:?}");
        assert!(text.contains("\r\x1b[2Kwaiting for a 0s"), "{text:?}");
        assert!(text.contains("\r\x1b[2Kwaiting for b 0s"), "{text:?}");
        assert!(text.ends_with("\r\x1b[2K"), "{text:?}");
    }
}
