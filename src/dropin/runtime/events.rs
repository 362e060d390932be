//! F. The SDK event adapter: reads Claude Agent SDK messages into the signals the
//! policies use. Messages it does not know are counted and ignored; a known message with
//! a malformed field is ignored with the reason (never an error: the stream must go on).
//!
//! Shapes read (from the SDK's TypeScript reference):
//! - `{ type: "system", subtype: "status", status: "compacting" | null }`
//! - `{ type: "system", subtype: "compact_boundary", compact_metadata: { trigger, pre_tokens } }`
//! - `{ type: "system", subtype: "files_persisted", files: [{ filename, file_id }],
//!   failed: [{ filename, error }], session_id }`
//! - `{ type: "rate_limit_event", rate_limit_info: { status, resetsAt?, utilization?, rateLimitType? } }`
//! - `{ type: "auth_status", isAuthenticating, output: string[], error? }`

use serde::Serialize;
use serde_json::Value;

/// One SDK message, as far as the runtime cares.
#[derive(Debug, Clone, PartialEq)]
pub enum SdkEvent {
    Status {
        status: Option<String>,
    },
    CompactBoundary {
        trigger: Option<String>,
        pre_tokens: Option<u64>,
    },
    FilesPersisted {
        session_id: Option<String>,
        files: Vec<(String, String)>,
        failed: Vec<(String, String)>,
    },
    RateLimit {
        status: String,
        resets_at: Option<f64>,
        utilization: Option<f64>,
        limit_type: Option<String>,
    },
    AuthStatus {
        authenticating: bool,
        error: Option<String>,
    },
    /// A message type the adapter does not use (its `type`/`subtype`).
    Other(String),
    /// A known message with a field it cannot read.
    Malformed(String),
}

impl SdkEvent {
    /// The `type` (and `subtype` for system messages) it was read from.
    pub fn kind(&self) -> &str {
        match self {
            SdkEvent::Status { .. } => "status",
            SdkEvent::CompactBoundary { .. } => "compact_boundary",
            SdkEvent::FilesPersisted { .. } => "files_persisted",
            SdkEvent::RateLimit { .. } => "rate_limit_event",
            SdkEvent::AuthStatus { .. } => "auth_status",
            SdkEvent::Other(k) => k,
            SdkEvent::Malformed(_) => "malformed",
        }
    }
}

fn s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(String::from)
}

fn pairs(v: &Value, list: &str, a: &str, b: &str) -> Result<Vec<(String, String)>, String> {
    match v.get(list) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .enumerate()
            .map(|(i, it)| match (s(it, a), it.get(b)) {
                (Some(x), Some(Value::String(y))) => Ok((x, y.clone())),
                (Some(x), Some(y)) if b == "error" => Ok((x, y.to_string())),
                _ => Err(format!("{list}[{i}] needs string {a} and {b}")),
            })
            .collect(),
        Some(_) => Err(format!("{list} must be an array")),
    }
}

/// Reads one SDK message.
pub fn read_event(v: &Value) -> SdkEvent {
    let Some(t) = v.get("type").and_then(Value::as_str) else {
        return SdkEvent::Malformed("message has no string type".into());
    };
    match t {
        "system" => {
            let sub = v.get("subtype").and_then(Value::as_str).unwrap_or("");
            match sub {
                "status" => match v.get("status") {
                    None | Some(Value::Null) => SdkEvent::Status { status: None },
                    Some(Value::String(x)) => SdkEvent::Status {
                        status: Some(x.clone()),
                    },
                    Some(_) => SdkEvent::Malformed("status must be a string or null".into()),
                },
                "compact_boundary" => {
                    let meta = v.get("compact_metadata");
                    SdkEvent::CompactBoundary {
                        trigger: meta.and_then(|m| s(m, "trigger")),
                        pre_tokens: meta
                            .and_then(|m| m.get("pre_tokens"))
                            .and_then(Value::as_u64),
                    }
                }
                "files_persisted" => match (
                    pairs(v, "files", "filename", "file_id"),
                    pairs(v, "failed", "filename", "error"),
                ) {
                    (Ok(files), Ok(failed)) => SdkEvent::FilesPersisted {
                        session_id: s(v, "session_id"),
                        files,
                        failed,
                    },
                    (Err(e), _) | (_, Err(e)) => {
                        SdkEvent::Malformed(format!("files_persisted: {e}"))
                    }
                },
                other => SdkEvent::Other(format!("system/{other}")),
            }
        }
        "rate_limit_event" => {
            let info = v.get("rate_limit_info");
            match info.and_then(|i| s(i, "status")) {
                Some(status) => SdkEvent::RateLimit {
                    status,
                    resets_at: info.and_then(|i| i.get("resetsAt")).and_then(Value::as_f64),
                    utilization: info
                        .and_then(|i| i.get("utilization"))
                        .and_then(Value::as_f64),
                    limit_type: info.and_then(|i| s(i, "rateLimitType")),
                },
                None => SdkEvent::Malformed("rate_limit_event needs rate_limit_info.status".into()),
            }
        }
        "auth_status" => match v.get("isAuthenticating").and_then(Value::as_bool) {
            Some(authenticating) => SdkEvent::AuthStatus {
                authenticating,
                error: s(v, "error"),
            },
            None => SdkEvent::Malformed("auth_status needs boolean isAuthenticating".into()),
        },
        other => SdkEvent::Other(other.to_string()),
    }
}

/// The rate-limit state last reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitSignal {
    /// `allowed`, `allowed_warning` or `rejected`.
    pub status: String,
    /// When the window resets, Unix milliseconds.
    pub resets_at_ms: Option<f64>,
    pub utilization: Option<f64>,
    pub limit_type: Option<String>,
}

/// The auth state last reported.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthSignal {
    /// `authenticating`, `authenticated` or `auth_failed`.
    pub state: &'static str,
    pub error: Option<String>,
}

/// What one attempt has seen so far.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptSignals {
    /// `compact_boundary` messages seen.
    pub compactions: u32,
    /// The last status was `compacting` and no boundary has followed.
    pub compacting: bool,
    pub last_compaction_trigger: Option<String>,
    pub last_compaction_pre_tokens: Option<u64>,
    pub rate_limit: Option<RateLimitSignal>,
    pub auth: Option<AuthSignal>,
    pub files_persisted: u32,
    pub files_failed: u32,
    /// Messages read, ignored ones included.
    pub events: u32,
    pub ignored: u32,
}

impl AttemptSignals {
    pub fn compaction_observed(&self) -> bool {
        self.compactions > 0
    }

    pub fn apply(&mut self, ev: &SdkEvent) {
        self.events += 1;
        match ev {
            SdkEvent::Status { status } => {
                self.compacting = status.as_deref() == Some("compacting");
            }
            SdkEvent::CompactBoundary {
                trigger,
                pre_tokens,
            } => {
                self.compactions += 1;
                self.compacting = false;
                self.last_compaction_trigger.clone_from(trigger);
                self.last_compaction_pre_tokens = *pre_tokens;
            }
            SdkEvent::FilesPersisted { files, failed, .. } => {
                self.files_persisted += u32::try_from(files.len()).unwrap_or(u32::MAX);
                self.files_failed += u32::try_from(failed.len()).unwrap_or(u32::MAX);
            }
            SdkEvent::RateLimit {
                status,
                resets_at,
                utilization,
                limit_type,
            } => {
                self.rate_limit = Some(RateLimitSignal {
                    status: status.clone(),
                    // The SDK reports seconds; a value past year 33658 is taken as ms.
                    resets_at_ms: resets_at.map(|t| if t < 1e12 { t * 1000.0 } else { t }),
                    utilization: *utilization,
                    limit_type: limit_type.clone(),
                });
            }
            SdkEvent::AuthStatus {
                authenticating,
                error,
            } => {
                let state = match (authenticating, error) {
                    (_, Some(_)) => "auth_failed",
                    (true, None) => "authenticating",
                    (false, None) => "authenticated",
                };
                self.auth = Some(AuthSignal {
                    state,
                    error: error.clone(),
                });
            }
            SdkEvent::Other(_) | SdkEvent::Malformed(_) => self.ignored += 1,
        }
    }

    /// How long to wait before the next call, from the last rate-limit event:
    /// until the reset when rejected, 0 otherwise; `None` without a usable reset time.
    pub fn backoff_ms(&self, now_ms: f64) -> Option<f64> {
        let rl = self.rate_limit.as_ref()?;
        if rl.status != "rejected" {
            return Some(0.0);
        }
        rl.resets_at_ms.map(|t| (t - now_ms).max(0.0))
    }
}

#[cfg(test)]
mod tests;
