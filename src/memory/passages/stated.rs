//! What someone said they like, for a question about it: "What does Ann enjoy doing?"
//! shares at most a word with "I love climbing" and "I really like hiking", and nothing
//! with the hundreds of other turns that say "love" or "like" in passing. The compaction
//! keeps each preference a folded message states as a record with its message
//! ([`crate::memory::summary::statements`]); a question asking what someone likes
//! ([`super::expand::asks_preference`]) gets those messages, the person's own when it
//! says whose, fused with its word matches by reciprocal rank.

use super::fuse::rank_fusion;
use super::{Hit, HitScope, Recall};
use crate::memory::db::MemoryError;
use crate::memory::message::Role;
use crate::memory::pg::reads;
use crate::memory::store::{on_pg, Backend, MemoryStore};
use rusqlite::params;
use std::collections::HashSet;

/// What the stated preferences weigh against the word matches in the fusion: as much.
pub const STATED_WEIGHT: f64 = 1.0;

impl MemoryStore {
    /// The messages of `scope` that state a preference (the compaction's preference
    /// records, by the message each came from), of `speaker` when given, newest first,
    /// at most `limit`. Read from the newest record back, stopping at `limit`: the whole
    /// session's preferences are read only when fewer than that are in scope.
    pub fn stated_preferences(
        &self,
        scope: &HitScope<'_>,
        speaker: Option<Role>,
        limit: usize,
    ) -> Result<Vec<Hit>, MemoryError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut seen: HashSet<i64> = HashSet::new();
        let mut out = Vec::new();
        // Whether to read on, given the next row: newest record first.
        let mut take = |seq: i64, lane: &str, role: Role, ts: i64| {
            let kept = scope.lane.is_none_or(|l| l == lane)
                && speaker.is_none_or(|s| s == role)
                && scope.holds_time(ts)
                && seen.insert(seq);
            if kept {
                out.push(Hit {
                    seq,
                    score: 0.0,
                    terms: 0,
                    weight: 0.0,
                    asks: false,
                });
            }
            out.len() < limit
        };
        match &self.db {
            Backend::Lite(conn) => {
                let mut stmt = conn.prepare_cached(
                    "SELECT m.seq, m.thread_key, m.role, m.ts_ms FROM records r
                     JOIN messages m ON m.session_id = r.session_id AND m.message_id = r.range_from
                     WHERE r.session_id = ?1 AND r.kind = 'preference' AND m.seq < ?2
                     ORDER BY r.id DESC",
                )?;
                // Read row by row, to stop at `limit`.
                let mut rows = stmt.query(params![scope.session, scope.below_seq])?;
                while let Some(r) = rows.next()? {
                    let role = Role::parse(r.get_ref(2)?.as_str().unwrap_or(""));
                    let lane = r.get_ref(1)?.as_str().unwrap_or("");
                    if !take(r.get(0)?, lane, role, r.get(3)?) {
                        break;
                    }
                }
            }
            Backend::Pg(link) => {
                let rows = on_pg!(link, "reading preferences", |c| {
                    reads::stated_preference_rows(c, scope.session, scope.below_seq)
                })?;
                for (seq, lane, role, ts) in rows {
                    if !take(seq, &lane, role, ts) {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    /// `hits` (the matches of `recall` in `scope`) and, when it asks what someone likes
    /// ([`Recall::preference`]), the messages of `scope` stating a preference of the
    /// speaker it is about ([`MemoryStore::stated_preferences`]), fused by reciprocal rank
    /// at [`STATED_WEIGHT`]. At most `limit`.
    pub fn with_stated(
        &self,
        scope: &HitScope<'_>,
        recall: &Recall,
        hits: Vec<Hit>,
        limit: usize,
    ) -> Result<Vec<Hit>, MemoryError> {
        if !recall.preference {
            return Ok(hits);
        }
        let stated = self.stated_preferences(scope, recall.signals.speaker, limit)?;
        if stated.is_empty() {
            return Ok(hits);
        }
        Ok(rank_fusion(&hits, stated, STATED_WEIGHT, limit))
    }
}

#[cfg(test)]
mod tests;
