//! C/D. Turn integrity: orphan repair of a session transcript, and the stale-resume
//! recovery plan.
//!
//! Orphan repair reads both transcript shapes a gateway keeps: the Pi session format
//! (`{ type: "message", id, parentId, message: { role, content } }`) and the Claude Code
//! format (`{ type: "user" | "assistant", uuid, parentUuid, message: { role, content } }`).
//! A trailing run of user messages with no assistant reply (a turn that failed before
//! answering) is removed, and entries that hung off a removed message are re-parented
//! to the removed run's parent, so the next turn does not start with two user messages
//! in a row. A trailing user message made only of tool results is not an orphan: it
//! answers the assistant's tool call, and removing it would leave that call unanswered.

use super::error::ErrorInfo;
use serde::Serialize;
use serde_json::Value;

/// The parent-link field of an entry, by shape.
fn parent_key(e: &Value) -> Option<&'static str> {
    if e.get("parentUuid").is_some() {
        Some("parentUuid")
    } else if e.get("parentId").is_some() {
        Some("parentId")
    } else {
        None
    }
}

fn id_of(e: &Value) -> Option<&str> {
    e.get("id")
        .or_else(|| e.get("uuid"))
        .and_then(Value::as_str)
}

fn parent_of(e: &Value) -> Option<&str> {
    parent_key(e).and_then(|k| e.get(k)).and_then(Value::as_str)
}

/// The role of a conversation message entry; `None` for anything else (session headers,
/// custom entries, compaction records, Claude Code meta entries).
fn role_of(e: &Value) -> Option<&str> {
    let t = e.get("type").and_then(Value::as_str)?;
    if e.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let role = e.get("message")?.get("role").and_then(Value::as_str);
    match t {
        "message" => role,
        "user" | "assistant" => role.or(Some(t)),
        _ => None,
    }
}

/// True when the message's content is a non-empty list of `tool_result` blocks only.
fn only_tool_results(e: &Value) -> bool {
    match e.get("message").and_then(|m| m.get("content")) {
        Some(Value::Array(blocks)) => {
            !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        }
        _ => false,
    }
}

/// The text of a message's content (strings and `text` blocks, joined by newlines).
fn text_of(e: &Value) -> String {
    match e.get("message").and_then(|m| m.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// A removed orphan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Orphan {
    /// Index in the input.
    pub index: usize,
    pub id: Option<String>,
    /// Its text, so the caller can fold it into the next prompt.
    pub text: String,
}

/// What repair found; the caller applies it to its own entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrphanRepair {
    pub repaired: bool,
    /// The trailing user messages removed, oldest first.
    pub removed: Vec<Orphan>,
    /// Kept entries whose parent was removed: (index, field, new parent).
    #[serde(skip)]
    pub reparent: Vec<(usize, &'static str, Option<String>)>,
    /// Why nothing was removed: `empty`, `no_messages`, `last_is_assistant`,
    /// `last_is_tool_result`, `last_is_other_role`.
    pub reason: Option<&'static str>,
}

/// Finds the trailing orphan run of `entries` (input order, oldest first).
pub fn find_orphans<'a>(entries: &'a [Value]) -> OrphanRepair {
    let kept = |reason| OrphanRepair {
        reason: Some(reason),
        ..OrphanRepair::default()
    };
    if entries.is_empty() {
        return kept("empty");
    }
    let messages: Vec<(usize, &str)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, e)| role_of(e).map(|r| (i, r)))
        .collect();
    let Some(&(_, last_role)) = messages.last() else {
        return kept("no_messages");
    };
    match last_role {
        "user" => {}
        "assistant" => return kept("last_is_assistant"),
        "toolResult" => return kept("last_is_tool_result"),
        _ => return kept("last_is_other_role"),
    }
    let run: Vec<usize> = messages
        .iter()
        .rev()
        .take_while(|(i, r)| *r == "user" && !only_tool_results(&entries[*i]))
        .map(|(i, _)| *i)
        .collect();
    if run.is_empty() {
        return kept("last_is_tool_result");
    }
    let mut removed: Vec<Orphan> = run
        .iter()
        .rev()
        .map(|&i| Orphan {
            index: i,
            id: id_of(&entries[i]).map(String::from),
            text: text_of(&entries[i]),
        })
        .collect();
    removed.sort_by_key(|o| o.index);
    // A removed entry's replacement parent: follow parents through the removed run.
    let removed_ids: std::collections::HashMap<&str, usize> = removed
        .iter()
        .filter_map(|o| o.id.as_deref().map(|id| (id, o.index)))
        .collect();
    let resolve = |mut parent: Option<&'a str>| -> Option<String> {
        let mut hops = 0;
        while let Some(&i) = parent.and_then(|p| removed_ids.get(p)) {
            parent = parent_of(&entries[i]);
            hops += 1;
            if hops > removed_ids.len() {
                break; // a cycle in the links
            }
        }
        parent.map(String::from)
    };
    let removed_set: std::collections::HashSet<usize> = removed.iter().map(|o| o.index).collect();
    let reparent = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| !removed_set.contains(i))
        .filter_map(|(i, e)| {
            let key = parent_key(e)?;
            let p = e.get(key)?.as_str()?;
            removed_ids
                .contains_key(p)
                .then(|| (i, key, resolve(Some(p))))
        })
        .collect();
    OrphanRepair {
        repaired: true,
        removed,
        reparent,
        reason: None,
    }
}

/// Applies a repair to owned entries: the repaired sequence.
pub fn apply(entries: Vec<Value>, repair: &OrphanRepair) -> Vec<Value> {
    let gone: std::collections::HashSet<usize> = repair.removed.iter().map(|o| o.index).collect();
    let mut out: Vec<Value> = Vec::with_capacity(entries.len());
    for (i, mut e) in entries.into_iter().enumerate() {
        if gone.contains(&i) {
            continue;
        }
        if let Some((_, key, parent)) = repair.reparent.iter().find(|(j, _, _)| *j == i) {
            if let Some(obj) = e.as_object_mut() {
                obj.insert(
                    (*key).to_string(),
                    parent.clone().map_or(Value::Null, Value::String),
                );
            }
        }
        out.push(e);
    }
    out
}

/// The repair of a JSONL transcript, kept as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonlRepair {
    pub text: String,
    pub repair: OrphanRepair,
    /// 1-based numbers of lines that are not JSON objects; they are kept as they were
    /// and take no part in the analysis.
    pub malformed_lines: Vec<usize>,
}

/// Orphan repair on JSONL text: removed lines go, re-parented lines are rewritten, every
/// other line (malformed ones included) keeps its bytes.
pub fn repair_jsonl(text: &str) -> JsonlRepair {
    let raw: Vec<&str> = text.split_inclusive('\n').collect();
    let mut parsed = Vec::new();
    let mut line_of = Vec::new();
    let mut malformed = Vec::new();
    for (n, line) in raw.iter().enumerate() {
        let body = line.trim();
        if body.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(body) {
            Ok(v @ Value::Object(_)) => {
                parsed.push(v);
                line_of.push(n);
            }
            _ => malformed.push(n + 1),
        }
    }
    let repair = find_orphans(&parsed);
    let mut drop = vec![false; raw.len()];
    let mut rewrite: Vec<Option<String>> = vec![None; raw.len()];
    for o in &repair.removed {
        drop[line_of[o.index]] = true;
    }
    for (i, key, parent) in &repair.reparent {
        let mut v = parsed[*i].clone();
        if let Some(obj) = v.as_object_mut() {
            obj.insert(
                (*key).to_string(),
                parent.clone().map_or(Value::Null, Value::String),
            );
        }
        let nl = if raw[line_of[*i]].ends_with('\n') {
            "\n"
        } else {
            ""
        };
        rewrite[line_of[*i]] = Some(format!("{v}{nl}"));
    }
    let mut out = String::with_capacity(text.len());
    for (n, line) in raw.iter().enumerate() {
        if drop[n] {
            continue;
        }
        match &rewrite[n] {
            Some(r) => out.push_str(r),
            None => out.push_str(line),
        }
    }
    JsonlRepair {
        text: out,
        repair,
        malformed_lines: malformed,
    }
}

/// How a failed resume failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeErrorClass {
    /// The server has no session under the resume id.
    SessionNotFound,
    /// The resume id is malformed or refused.
    InvalidSession,
    /// Anything else: not a resume problem.
    Other,
}

/// Classifies a resume failure from the error's code, type, status and message.
pub fn classify_resume_error(e: &ErrorInfo) -> ResumeErrorClass {
    let h = e.haystack();
    const NOT_FOUND: [&str; 7] = [
        "no conversation found",
        "session not found",
        "session_not_found",
        "could not find session",
        "session does not exist",
        "no such session",
        "unknown session",
    ];
    const INVALID: [&str; 6] = [
        "invalid session",
        "invalid_session",
        "not a valid session",
        "session id must be a valid uuid",
        "invalid resume",
        "--resume requires a valid session",
    ];
    if NOT_FOUND.iter().any(|p| h.contains(p)) || (e.status == Some(404) && h.contains("session")) {
        ResumeErrorClass::SessionNotFound
    } else if INVALID.iter().any(|p| h.contains(p)) {
        ResumeErrorClass::InvalidSession
    } else {
        ResumeErrorClass::Other
    }
}

/// What to do with a failed resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ResumeAction {
    /// Run the recovery steps: the resume id is stale.
    Recover,
    /// Stop: the fresh session failed too (or recovery already ran for this turn).
    Fail,
    /// Not a resume failure; handle the error as usual.
    Propagate,
}

/// The steps that recover a session whose resume id went stale, in order.
pub const RECOVERY_STEPS: [&str; 4] = [
    "clear_resume_marker",
    "start_fresh_session",
    "retry_once",
    "emit_diagnostic",
];

/// The plan for one failed resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResumePlan {
    pub class: ResumeErrorClass,
    pub action: ResumeAction,
    /// The steps to run for `recover` ([`RECOVERY_STEPS`]); empty otherwise.
    pub steps: Vec<&'static str>,
    /// True when the turn must end.
    pub terminal: bool,
    pub reason: &'static str,
    /// A message for logs or the user.
    pub message: String,
}

/// Plans recovery after a resume failed; `previous_recoveries` counts recoveries
/// already run for this turn (a second failure after one is terminal).
pub fn plan_resume(e: &ErrorInfo, previous_recoveries: u32) -> ResumePlan {
    let class = classify_resume_error(e);
    let mut plan = ResumePlan {
        class,
        action: ResumeAction::Propagate,
        steps: Vec::new(),
        terminal: false,
        reason: "not_a_resume_error",
        message: String::new(),
    };
    if class == ResumeErrorClass::Other {
        plan.message = "The error is not a stale or invalid session; handle it as usual.".into();
        return plan;
    }
    if previous_recoveries > 0 {
        plan.action = ResumeAction::Fail;
        plan.terminal = true;
        plan.reason = "failed_after_recovery";
        plan.message = format!(
            "Resuming failed again after one fresh session ({}): giving up on this turn.",
            e.message
        );
        return plan;
    }
    plan.action = ResumeAction::Recover;
    plan.steps = RECOVERY_STEPS.to_vec();
    plan.reason = match class {
        ResumeErrorClass::SessionNotFound => "session_not_found",
        _ => "invalid_session",
    };
    plan.message = format!(
        "The resume id is stale ({}): clear it, start one fresh session and retry once.",
        e.message
    );
    plan
}

#[cfg(test)]
mod tests;
