//! What the server saw: every request's method and path, each distinct `User-Agent`, and the
//! time each request kept its client waiting.

use super::{KubeSim, Shared};

impl Shared {
    pub(super) fn saw_user_agent(&self, agent: &str) {
        self.user_agents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(agent.to_string());
    }

    pub(super) fn busy(&self, from: std::time::Instant) {
        self.busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((from, std::time::Instant::now()));
    }

    pub(super) fn log(&self, method: &str, path: &str) {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push((method.to_string(), path.to_string()));
    }
}

impl KubeSim {
    /// (method, path+query) of every request so far, in order.
    pub fn request_log(&self) -> Vec<(String, String)> {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// From each request's arrival to its answer, watches aside: the time a client waited on
    /// this API server (the dns bench tells it apart from the agent's own).
    pub fn busy_spans(&self) -> Vec<(std::time::Instant, std::time::Instant)> {
        self.shared
            .busy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Every distinct `User-Agent` header seen so far ("" for a request without one).
    pub fn user_agents(&self) -> Vec<String> {
        self.shared
            .user_agents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    pub fn clear_request_log(&self) {
        self.shared
            .log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}
