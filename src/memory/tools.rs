//! The model's tools over a chat's memory, for looking further back than its context:
//! `conversation_search` finds stored messages by their words (within a time window or
//! one lane, if asked), with the summaries and facts that match; `conversation_expand`
//! turns a message id or a summary id back into the verbatim messages, within a token
//! budget.
//!
//! A tool set belongs to one session (one chat): no input names a session, so a tool can
//! reach nothing of another chat. Inputs are checked against the schema the definitions
//! publish; a bad call becomes a JSON error the model can read and correct.

use super::db::MemoryError;
use super::passages::{clear_weight, fuse, HitScope};
use super::store::{ChatMessage, MemoryStore, Record, Role};
use crate::core::time::iso_from_epoch;
use crate::core::tokens::counted;
use crate::core::tool::ToolError;
use serde_json::{json, Value};

/// The search tool's name (a valid Messages API tool name, apart from OpenClaw's own
/// `memory_search` and `sessions_search`).
pub const SEARCH_TOOL: &str = "conversation_search";
/// The expand tool's name.
pub const EXPAND_TOOL: &str = "conversation_expand";
/// Messages a search returns unless `max_results` says otherwise.
pub const DEFAULT_SEARCH_RESULTS: u64 = 8;
/// `max_results` above this is treated as this.
pub const MAX_SEARCH_RESULTS: u64 = 50;
/// Summaries and facts listed with a search's messages, at most.
pub const SEARCH_MEMORIES: usize = 3;
/// A search result's text is cut to this many characters (expand gives it whole).
pub const RESULT_CHARS: usize = 400;
/// Turns on each side of an expanded message unless `before` / `after` say otherwise.
pub const DEFAULT_AROUND: u64 = 3;
/// `before` / `after` above this is treated as this.
pub const MAX_AROUND: u64 = 50;
/// Tokens an expansion returns at most, unless `max_tokens` says otherwise.
pub const DEFAULT_EXPAND_TOKENS: u64 = 2_000;
/// The smallest and largest `max_tokens` of an expansion.
pub const MIN_EXPAND_TOKENS: u64 = 200;
pub const MAX_EXPAND_TOKENS: u64 = 16_000;
/// Longest `query`, in characters.
pub const MAX_QUERY_CHARS: usize = 2_000;
/// How a summary or fact is named in results: `record:<id>`.
pub const RECORD_PREFIX: &str = "record:";
/// The `lane` a search gives to mean the conversation's own thread.
pub const CURRENT_LANE: &str = "current";

/// Whose memory a tool set reaches: one session, and the lane the conversation is in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    pub session: String,
    /// The conversation's own lane (`lane: "current"`); `None` when the caller has none.
    pub lane: Option<String>,
    /// Who writes the turns, a word of a name each (see
    /// [`MemoryStore::recall`](crate::memory::store::MemoryStore::recall)); empty: the
    /// names the conversation tells.
    pub speakers: Vec<(String, Role)>,
}

/// Runs tool `name` on `input` for `scope` at `now_ms`: the result as JSON text, or the
/// error the model reads. A storage fault is the caller's to report.
pub fn run(
    store: &MemoryStore,
    scope: &Scope,
    name: &str,
    input: &Value,
    now_ms: i64,
) -> Result<String, MemoryError> {
    run_with(store, scope, name, input, now_ms, None)
}

/// [`run`], with the search query's vector by the host's embedder (the model that gave
/// the messages theirs): a search then also finds the messages nearest it, fused with
/// its words' matches as the assembly fuses them
/// ([`fuse`](crate::memory::passages::fuse), weight 1).
pub fn run_with(
    store: &MemoryStore,
    scope: &Scope,
    name: &str,
    input: &Value,
    now_ms: i64,
    query_vector: Option<&[f32]>,
) -> Result<String, MemoryError> {
    match name {
        SEARCH_TOOL => match search_input(input, now_ms) {
            Ok(i) => Ok(search(store, scope, &i, now_ms, query_vector)?.to_string()),
            Err(e) => Ok(e.to_json(name)),
        },
        EXPAND_TOOL => match expand_input(input) {
            Ok(i) => Ok(match expand(store, scope, &i, now_ms)? {
                Ok(v) => v.to_string(),
                Err(e) => e.to_json(name),
            }),
            Err(e) => Ok(e.to_json(name)),
        },
        _ => Ok(unknown_tool(name)),
    }
}

/// `2026-04-10 16:05 UTC`.
pub fn date_of(ts_ms: i64) -> String {
    let iso = iso_from_epoch(ts_ms.div_euclid(1000), "");
    match iso.split_once('T') {
        Some((date, time)) => format!("{date} {} UTC", time.get(..5).unwrap_or(time)),
        None => iso,
    }
}

/// How long before `now_ms` a moment was: `just now`, `5 minutes ago`, `3 hours ago`,
/// `12 days ago`.
pub fn age_of(ts_ms: i64, now_ms: i64) -> String {
    let ms = now_ms.saturating_sub(ts_ms);
    let plural = |n: i64, unit: &str| {
        if n == 1 {
            format!("1 {unit} ago")
        } else {
            format!("{n} {unit}s ago")
        }
    };
    match ms {
        i64::MIN..=-60_000 => "later".to_string(),
        -59_999..=59_999 => "just now".to_string(),
        60_000..=3_599_999 => plural(ms / 60_000, "minute"),
        3_600_000..=86_399_999 => plural(ms / 3_600_000, "hour"),
        _ => plural(ms / 86_400_000, "day"),
    }
}

/// `text` cut to `max` characters, `…` marking the cut.
fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}…", text[..at].trim_end()),
    }
}

fn search(
    store: &MemoryStore,
    scope: &Scope,
    input: &SearchInput,
    now_ms: i64,
    query_vector: Option<&[f32]>,
) -> Result<Value, MemoryError> {
    let lane = match input.lane.as_deref() {
        Some(CURRENT_LANE) => scope.lane.as_deref(),
        other => other,
    };
    let hit_scope = HitScope {
        session: &scope.session,
        lane,
        below_seq: i64::MAX,
        from_ms: input.from_ms,
        until_ms: input.until_ms,
    };
    // The assembly's retrieval: who and when the query is about, and a second round.
    let recall = store.recall(&scope.session, &input.query, now_ms, &scope.speakers)?;
    let (hits, weights) = store.recall_hits(&hit_scope, &recall, input.max_results)?;
    let mut hits = store.with_stated(&hit_scope, &recall, hits, input.max_results)?;
    if let Some(v) = query_vector {
        let near = store.nearest(&hit_scope, v, input.max_results)?;
        hits = fuse(&hits, &near, 1.0, clear_weight(&weights), input.max_results);
    }
    let mut results = Vec::with_capacity(hits.len());
    for hit in &hits {
        if let Some(m) = store.message_in(&scope.session, hit.seq)? {
            results.push(message_json(&m, now_ms, Some(RESULT_CHARS)));
        }
    }
    let in_window = |r: &Record| {
        input.from_ms.is_none_or(|f| r.updated_at_ms >= f)
            && input.until_ms.is_none_or(|u| r.updated_at_ms <= u)
    };
    let memories: Vec<Value> = store
        .search(
            &scope.session,
            &input.query,
            lane.unwrap_or(""),
            SEARCH_MEMORIES,
            u64::MAX,
        )?
        .into_iter()
        .filter(|r| {
            in_window(r) && lane.is_none_or(|l| r.thread_key.is_empty() || r.thread_key == l)
        })
        .map(|r| {
            json!({
                "id": format!("{RECORD_PREFIX}{}", r.id),
                "kind": r.kind.as_str(),
                "lane": r.thread_key,
                "updated": date_of(r.updated_at_ms),
                "text": cut(&r.body, RESULT_CHARS),
            })
        })
        .collect();
    let mut out = json!({ "query": input.query, "results": results });
    if !memories.is_empty() {
        out["memories"] = Value::Array(memories);
    }
    if hits.is_empty() {
        out["note"] = json!(
            "No stored message of this chat holds these words in that scope. Try other words \
             (a name, a place, a number), a wider time window or no lane."
        );
    }
    Ok(out)
}

/// A message as the tools show it; `max_chars` cuts its text.
fn message_json(m: &ChatMessage, now_ms: i64, max_chars: Option<usize>) -> Value {
    let text = max_chars.map_or_else(|| m.text.clone(), |n| cut(&m.text, n));
    json!({
        "id": m.message_id,
        "lane": m.thread_key,
        "role": m.role.as_str(),
        "date": date_of(m.ts_ms),
        "ago": age_of(m.ts_ms, now_ms),
        "text": text,
    })
}

/// What an expansion answers with: the messages, oldest first, and where to go on.
struct Expansion {
    messages: Vec<Value>,
    more_before: Option<String>,
    more_after: Option<String>,
}

impl Expansion {
    fn into_json(self, id: &str, lane: &str, extra: Option<(&str, Value)>) -> Value {
        let mut out = json!({ "id": id, "lane": lane, "messages": self.messages });
        if let Some(b) = self.more_before {
            out["more_before"] = json!(b);
        }
        if let Some(a) = self.more_after {
            out["more_after"] = json!(a);
        }
        if let Some((k, v)) = extra {
            out[k] = v;
        }
        out
    }
}

/// The tokens a message costs in an expansion's JSON.
fn cost_of(v: &Value) -> u64 {
    counted(&v.to_string())
}

/// What the answer costs besides its messages.
const EXPANSION_FRAME_TOKENS: u64 = 60;

fn expand(
    store: &MemoryStore,
    scope: &Scope,
    input: &ExpandInput,
    now_ms: i64,
) -> Result<Result<Value, ToolError>, MemoryError> {
    let budget = input.max_tokens.saturating_sub(EXPANSION_FRAME_TOKENS);
    if let Some(n) = input.id.strip_prefix(RECORD_PREFIX) {
        let record = match n.parse::<i64>() {
            Ok(n) => store.record_by_id(&scope.session, n)?,
            Err(_) => None,
        };
        let Some(record) = record else {
            return Ok(Err(ToolError::invalid(
                "id",
                format!("No summary or fact of this chat has id {:?}.", input.id),
            )));
        };
        return Ok(Ok(expand_record(store, scope, &record, budget, now_ms)?));
    }
    let Some(target) = store.message_by_id(&scope.session, &input.id)? else {
        return Ok(Err(ToolError::invalid(
            "id",
            format!(
                "No stored message of this chat has id {:?}; ids come from {SEARCH_TOOL} results or your context.",
                input.id
            ),
        )));
    };
    let lane = target.thread_key.clone();
    let before =
        store.lane_neighbours(&scope.session, &lane, target.seq, false, input.before + 1)?;
    let after = store.lane_neighbours(&scope.session, &lane, target.seq, true, input.after + 1)?;
    // The message itself, cut to the budget if it alone is over it.
    let mut shown = message_json(&target, now_ms, None);
    let mut used = cost_of(&shown);
    if used > budget {
        let mut chars = target.text.chars().count();
        while used > budget && chars > 0 {
            chars = chars * 3 / 4;
            shown = message_json(&target, now_ms, Some(chars));
            used = cost_of(&shown);
        }
    }
    // Then the nearest turns, one on each side in turn, while they fit.
    let (mut earlier, mut later) = (Vec::new(), Vec::new());
    let (mut b, mut a) = (0, 0);
    let (mut b_open, mut a_open) = (input.before > 0, input.after > 0);
    while b_open || a_open {
        for side in [false, true] {
            let (open, idx, limit, from) = if side {
                (&mut a_open, &mut a, input.after, &after)
            } else {
                (&mut b_open, &mut b, input.before, &before)
            };
            if !*open {
                continue;
            }
            let Some(m) = from.get(*idx).filter(|_| *idx < limit) else {
                *open = false;
                continue;
            };
            let v = message_json(m, now_ms, None);
            let cost = cost_of(&v);
            if used + cost > budget {
                *open = false;
                continue;
            }
            used += cost;
            *idx += 1;
            if side {
                later.push(v);
            } else {
                earlier.push(v);
            }
        }
    }
    let more_before = before.get(b).map(|m| m.message_id.clone());
    let more_after = after.get(a).map(|m| m.message_id.clone());
    earlier.reverse();
    let mut messages = earlier;
    messages.push(shown);
    messages.extend(later);
    Ok(Ok(Expansion {
        messages,
        more_before,
        more_after,
    }
    .into_json(&input.id, &lane, None)))
}

/// Messages read at a time while walking a summary's range.
const RANGE_PAGE: usize = 64;

/// A summary (or a record with a range) back to its messages, oldest first, within
/// `budget`; a record without messages behind it comes back whole, as its text.
fn expand_record(
    store: &MemoryStore,
    scope: &Scope,
    record: &Record,
    budget: u64,
    now_ms: i64,
) -> Result<Value, MemoryError> {
    let id = format!("{RECORD_PREFIX}{}", record.id);
    let text = cut(
        &record.body,
        usize::try_from(budget.saturating_mul(3)).unwrap_or(usize::MAX),
    );
    let range = match &record.message_range {
        Some((from, to)) => (
            store.message_by_id(&scope.session, from)?,
            store.message_by_id(&scope.session, to)?,
        ),
        None => (None, None),
    };
    let (Some(first), Some(last)) = range else {
        return Ok(json!({
            "id": id,
            "kind": record.kind.as_str(),
            "lane": record.thread_key,
            "text": text,
            "messages": [],
            "note": "No stored messages are behind this record; its text is all there is.",
        }));
    };
    let lane = first.thread_key.clone();
    let mut messages = Vec::new();
    let mut used = 0;
    let mut more_after = None;
    let mut next: Vec<ChatMessage> = vec![first.clone()];
    let mut cursor = first.seq;
    'walk: loop {
        for m in next.drain(..) {
            if m.seq > last.seq {
                break 'walk;
            }
            let v = message_json(&m, now_ms, None);
            let cost = cost_of(&v);
            if used + cost > budget {
                more_after = Some(m.message_id.clone());
                break 'walk;
            }
            used += cost;
            cursor = m.seq;
            messages.push(v);
        }
        next = store.lane_neighbours(&scope.session, &lane, cursor, true, RANGE_PAGE)?;
        if next.is_empty() {
            break;
        }
    }
    Ok(Expansion {
        messages,
        more_before: None,
        more_after,
    }
    .into_json(&id, &lane, Some(("kind", json!(record.kind.as_str())))))
}

mod input;
pub use input::{definitions, expand_input, search_input, unknown_tool, ExpandInput, SearchInput};

#[cfg(test)]
mod tests;
