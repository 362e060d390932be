//! The runtime counters of a Claude SDK runner, with the labels its diagnostics carry, as a
//! snapshot and in the Prometheus text exposition format (version 0.0.4).
//!
//! Series (one counter, one label set) are bounded: past `max_series` the least recently
//! updated series is dropped and `claude_sdk_metrics_series_evicted_total` counts it.
//! Per-counter totals are kept apart and never lose a count to eviction.

use lru::LruCache;
use serde::{Deserialize, Serialize};
use std::fmt::Write;
use std::num::NonZeroUsize;

/// Default bound on live series.
pub const DEFAULT_MAX_SERIES: usize = 10_000;

/// The counters, in exposition order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// Resumed turns whose thread section was removed.
    ThreadContextStripped,
    /// UTF-16 code units those removals saved.
    ThreadContextStrippedChars,
    /// Bytes of media planned as inline base64 (before encoding).
    InlineBytesSent,
    /// Media planned as a Files API reference.
    FileRefUsed,
    /// Files the SDK reported as failed to persist.
    PersistFailures,
    /// Overflow retries granted.
    OverflowRetries,
    /// Overflows ended early because retrying could not help.
    OverflowFailFast,
    /// Stale resume ids recovered with a fresh session.
    ResumeStaleRecovered,
}

impl Counter {
    pub const ALL: [Counter; 8] = [
        Counter::ThreadContextStripped,
        Counter::ThreadContextStrippedChars,
        Counter::InlineBytesSent,
        Counter::FileRefUsed,
        Counter::PersistFailures,
        Counter::OverflowRetries,
        Counter::OverflowFailFast,
        Counter::ResumeStaleRecovered,
    ];

    /// The counter's dotted name, as dashboards know it.
    pub fn name(self) -> &'static str {
        match self {
            Counter::ThreadContextStripped => "claude_sdk.prompt.thread_context_stripped",
            Counter::ThreadContextStrippedChars => {
                "claude_sdk.prompt.thread_context_stripped_chars"
            }
            Counter::InlineBytesSent => "claude_sdk.media.inline_bytes_sent",
            Counter::FileRefUsed => "claude_sdk.media.file_ref_used",
            Counter::PersistFailures => "claude_sdk.media.persist_failures",
            Counter::OverflowRetries => "claude_sdk.overflow.retries",
            Counter::OverflowFailFast => "claude_sdk.overflow.fail_fast",
            Counter::ResumeStaleRecovered => "claude_sdk.resume.stale_recovered",
        }
    }

    /// The Prometheus name: dots become underscores, counters end in `_total`.
    pub fn prometheus_name(self) -> String {
        format!("{}_total", self.name().replace('.', "_"))
    }

    fn help(self) -> &'static str {
        match self {
            Counter::ThreadContextStripped => {
                "Resumed turns whose thread-context section was stripped."
            }
            Counter::ThreadContextStrippedChars => {
                "UTF-16 code units of thread context stripped from resumed turns."
            }
            Counter::InlineBytesSent => "Bytes of media planned as inline base64.",
            Counter::FileRefUsed => "Media sent as a persisted file reference.",
            Counter::PersistFailures => "Files the SDK reported as failed to persist.",
            Counter::OverflowRetries => "Context-overflow retries granted after compaction.",
            Counter::OverflowFailFast => "Context overflows ended early with remediation.",
            Counter::ResumeStaleRecovered => "Stale resume ids recovered with one fresh session.",
        }
    }
}

/// The labels a runner puts on its diagnostics. Every field is optional; absent labels are
/// left out of a series.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Labels {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

impl Labels {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let mut push = |k: &'static str, v: Option<String>| {
            if let Some(v) = v {
                out.push((k, v));
            }
        };
        push("runId", self.run_id.clone());
        push("sessionId", self.session_id.clone());
        push("sessionKey", self.session_key.clone());
        push("provider", self.provider.clone());
        push("model", self.model.clone());
        push("attempt", self.attempt.map(|a| a.to_string()));
        out
    }
}

/// One series in a snapshot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub name: &'static str,
    pub labels: Labels,
    pub value: u64,
}

/// Everything counted so far.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    /// Total per counter (by dotted name), including series since evicted.
    pub totals: serde_json::Map<String, serde_json::Value>,
    /// Live series, ordered by counter then labels.
    pub series: Vec<Series>,
    /// Series dropped to stay within the bound.
    pub evicted_series: u64,
}

/// The counter registry.
#[derive(Debug)]
pub struct Metrics {
    totals: [u64; Counter::ALL.len()],
    series: LruCache<(Counter, Labels), u64>,
    evicted: u64,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new(DEFAULT_MAX_SERIES)
    }
}

impl Metrics {
    /// A registry holding at most `max_series` series (at least one).
    pub fn new(max_series: usize) -> Self {
        Metrics {
            totals: [0; Counter::ALL.len()],
            series: LruCache::new(NonZeroUsize::new(max_series).unwrap_or(NonZeroUsize::MIN)),
            evicted: 0,
        }
    }

    /// Adds `by` to `counter` for `labels` (saturating; a zero still creates the series).
    pub fn add(&mut self, counter: Counter, labels: &Labels, by: u64) {
        let i = counter as usize;
        self.totals[i] = self.totals[i].saturating_add(by);
        let key = (counter, labels.clone());
        if let Some(v) = self.series.get_mut(&key) {
            *v = v.saturating_add(by);
            return;
        }
        if self.series.push(key, by).is_some() {
            self.evicted += 1;
        }
    }

    pub fn total(&self, counter: Counter) -> u64 {
        self.totals[counter as usize]
    }

    /// Clears every count.
    pub fn reset(&mut self) {
        self.totals = [0; Counter::ALL.len()];
        self.series.clear();
        self.evicted = 0;
    }

    fn sorted(&self) -> Vec<(&(Counter, Labels), &u64)> {
        let mut all: Vec<_> = self.series.iter().collect();
        all.sort_by(|a, b| a.0.cmp(b.0));
        all
    }

    pub fn snapshot(&self) -> Snapshot {
        let totals = Counter::ALL
            .iter()
            .map(|&c| (c.name().to_string(), self.total(c).into()))
            .collect();
        let series = self
            .sorted()
            .into_iter()
            .map(|((c, l), v)| Series {
                name: c.name(),
                labels: l.clone(),
                value: *v,
            })
            .collect();
        Snapshot {
            totals,
            series,
            evicted_series: self.evicted,
        }
    }

    /// The Prometheus text exposition: `# HELP`, `# TYPE` and one line per series.
    pub fn prometheus(&self) -> String {
        let sorted = self.sorted();
        let mut out = String::new();
        for c in Counter::ALL {
            let name = c.prometheus_name();
            let _ = writeln!(out, "# HELP {name} {}", c.help());
            let _ = writeln!(out, "# TYPE {name} counter");
            for ((_, labels), v) in sorted.iter().filter(|((sc, _), _)| *sc == c) {
                let pairs = labels.pairs();
                if pairs.is_empty() {
                    let _ = writeln!(out, "{name} {v}");
                    continue;
                }
                let body: Vec<String> = pairs
                    .iter()
                    .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
                    .collect();
                let _ = writeln!(out, "{name}{{{}}} {v}", body.join(","));
            }
        }
        let name = "claude_sdk_metrics_series_evicted_total";
        let _ = writeln!(
            out,
            "# HELP {name} Metric series dropped to stay within the series bound."
        );
        let _ = writeln!(out, "# TYPE {name} counter");
        let _ = writeln!(out, "{name} {}", self.evicted);
        out
    }
}

/// Label values escape `\`, `"` and line feeds, as the exposition format requires.
fn escape_label(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for ch in v.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
