//! Compaction: deciding when a lane's older messages fold into its summary, writing the
//! fold (checked against the summary's version and the writer's fencing token), and
//! taking back a plan a caller's summarizer worked on.

use super::*;
use crate::memory::pg::compaction as pg_compaction;

/// The longest turn of the other side (the assistant's role) read as a person's turn,
/// whose statements are records like the user's: a longer one is an assistant's prose
/// (explanations, lists, caveats), which states nothing of the user's world.
pub const PERSON_TURN_MAX_TOKENS: u64 = 80;

/// Whether `m`'s sentences may state facts of the conversation: the user's, or a turn of
/// the other side's as short as a person's ([`PERSON_TURN_MAX_TOKENS`]); an assistant's
/// prose states none (its decisions still count). The one rule for records and summaries.
pub fn states_facts(m: &ChatMessage) -> bool {
    // Counted only for the other side's turns.
    m.role == Role::User || counted(&m.text) <= PERSON_TURN_MAX_TOKENS
}

/// A compaction plan as a caller hands it back: whose lane, on top of which summary version,
/// up to which message, and what triggered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedCompaction<'a> {
    pub session: &'a str,
    pub lane: &'a str,
    pub version: i64,
    pub last_folded: &'a str,
    pub trigger: Trigger,
}

/// A compaction decided and not yet written: which messages of a lane get folded into
/// which summary, and which stay verbatim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompactionPlan {
    pub session_id: String,
    pub thread_key: String,
    pub trigger: Trigger,
    /// The lane's summary the fold builds on (`None` for the first compaction).
    pub previous: Option<Record>,
    /// The messages to fold, oldest first.
    pub fold: Vec<ChatMessage>,
    /// The newest messages, left verbatim.
    pub kept: Vec<ChatMessage>,
}

/// Who wrote a compaction's summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummarySource {
    /// The extractive summarizer, as asked.
    Extractive,
    /// The caller's summarizer; its text was valid.
    Caller,
    /// The extractive summarizer, because the caller's text was not a valid summary
    /// (the reason).
    Fallback(&'static str),
}

/// What one compaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compaction {
    pub trigger: Trigger,
    /// Messages folded into the summary.
    pub folded: usize,
    pub summary_version: i64,
    /// Estimated tokens of the lane's context (summary and unsummarized messages) before
    /// and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub source: SummarySource,
    /// Facts, preferences and outcomes the folded messages stated, written as records.
    pub records: usize,
}

impl MemoryStore {
    /// Decides whether a lane is due for compaction at `now_ms` under `policy` (or, with
    /// `force`, whenever it has more than the messages kept verbatim) and what would be
    /// folded: every unsummarized message but the newest the policy keeps (see
    /// [`CompactionPolicy::kept`]); a threshold makes a compaction due only once it would
    /// fold [`min_fold`](CompactionPolicy::min_fold) messages. Nothing is written;
    /// [`MemoryStore::apply_compaction`] does that. `None` when nothing is due.
    pub fn plan_compaction(
        &self,
        session: &str,
        lane: &str,
        policy: &CompactionPolicy,
        now_ms: i64,
        force: bool,
    ) -> Result<Option<CompactionPlan>, MemoryError> {
        let mut recent = self.unsummarized(session, lane)?;
        let tokens: Vec<u64> = recent.iter().map(|m| counted(&m.text)).collect();
        let keep = policy.kept(tokens.iter().rev().copied());
        let folds = recent.len() - keep;
        let previous = self.record(session, RecordKind::ThreadSummary, lane)?;
        let age = previous.as_ref().map(|p| now_ms - p.updated_at_ms);
        let trigger = match policy.due(recent.len(), tokens.iter().sum(), age) {
            Some(t) if folds >= policy.min_fold.max(1) => t,
            _ if force && folds > 0 => Trigger::Forced,
            _ => return Ok(None),
        };
        let kept = recent.split_off(folds);
        Ok(Some(CompactionPlan {
            session_id: session.to_string(),
            thread_key: lane.to_string(),
            trigger,
            previous,
            fold: recent,
            kept,
        }))
    }

    /// The plan that folds the lane's unsummarized messages up to and including the one
    /// stored as `through` (a caller's own fold point, such as an assembly's
    /// [`fold_through`](crate::memory::assemble::Assembled::fold_through)), whatever the
    /// policy says. Nothing is written. `None` when `through` is not an unsummarized
    /// message of the lane.
    pub fn plan_through(
        &self,
        session: &str,
        lane: &str,
        through: &str,
    ) -> Result<Option<CompactionPlan>, MemoryError> {
        let mut fold = self.unsummarized(session, lane)?;
        let Some(at) = fold.iter().position(|m| m.message_id == through) else {
            return Ok(None);
        };
        let kept = fold.split_off(at + 1);
        Ok(Some(CompactionPlan {
            session_id: session.to_string(),
            thread_key: lane.to_string(),
            trigger: Trigger::Through,
            previous: self.record(session, RecordKind::ThreadSummary, lane)?,
            fold,
            kept,
        }))
    }

    /// The version of a lane's summary (0: none yet), after checking that `fence` (a lock
    /// holder's fencing token) is not older than the one the summary was last written
    /// under, and given when there is one ([`MemoryError::Fenced`] otherwise).
    pub fn check_fence(
        &self,
        session: &str,
        lane: &str,
        fence: Option<i64>,
    ) -> Result<i64, MemoryError> {
        let (current, written_fence): (i64, i64) = match &self.db {
            Backend::Lite(conn) => conn
                .query_row(
                    "SELECT summary_version, fence FROM records
                     WHERE session_id = ?1 AND kind = 'thread_summary' AND thread_key = ?2",
                    params![session, lane],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?
                .unwrap_or((0, 0)),
            // Locked until the transaction ends (in a compaction's: see `apply_compaction`).
            Backend::Pg(link) => on_pg!(link, "reading the summary's version", |c| {
                pg_compaction::summary_state(c, session, lane)
            })?,
        };
        match fence {
            Some(f) if f < written_fence => Err(MemoryError::Fenced {
                fence: Some(f),
                found: written_fence,
            }),
            None if written_fence > 0 => Err(MemoryError::Fenced {
                fence: None,
                found: written_fence,
            }),
            _ => Ok(current),
        }
    }

    /// The plan that folds the lane's unsummarized messages up to and including
    /// `last_folded`, on top of the summary at `version` (0: none yet), as
    /// [`MemoryStore::plan_compaction`] made it earlier: how a plan handed out to a
    /// caller is taken back. Fails with [`MemoryError::Stale`] when the summary moved on
    /// or `last_folded` is no longer an unsummarized message of the lane.
    pub fn replan(
        &self,
        session: &str,
        lane: &str,
        version: i64,
        last_folded: &str,
        trigger: Trigger,
    ) -> Result<CompactionPlan, MemoryError> {
        let previous = self.record(session, RecordKind::ThreadSummary, lane)?;
        let found = previous.as_ref().map_or(0, |p| p.summary_version);
        let mut fold = self.unsummarized(session, lane)?;
        let Some(at) = fold.iter().position(|m| m.message_id == last_folded) else {
            return Err(MemoryError::Stale {
                expected: version,
                found,
            });
        };
        if found != version {
            return Err(MemoryError::Stale {
                expected: version,
                found,
            });
        }
        let kept = fold.split_off(at + 1);
        Ok(CompactionPlan {
            session_id: session.to_string(),
            thread_key: lane.to_string(),
            trigger,
            previous,
            fold,
            kept,
        })
    }

    /// Writes the compaction `plan` describes: the lane's thread summary becomes `given`
    /// when it is a valid summary (see [`Summary::validate`]), else the previous summary
    /// with the folded messages added by the extractive summarizer; its version goes up by
    /// one and its message range then reaches the last folded message. Messages stay
    /// stored verbatim. Fails with [`MemoryError::Stale`] when the lane's summary changed
    /// since the plan was made (another compaction got there first), and with
    /// [`MemoryError::Fenced`] when `fence` (the fencing token of the lock the caller
    /// holds) is older than the one the summary was last written under, or missing while
    /// the summary was written under one; either way it writes nothing. The check and the
    /// write are one transaction, so processes sharing the file cannot both write the same
    /// version.
    pub fn apply_compaction(
        &mut self,
        plan: &CompactionPlan,
        given: Option<&str>,
        now_ms: i64,
        fence: Option<i64>,
    ) -> Result<Compaction, MemoryError> {
        match &mut self.db {
            Backend::Lite(conn) => conn.execute_batch("BEGIN IMMEDIATE")?,
            Backend::Pg(link) => {
                // The session's lock, as its messages' writes take it: a lane's first
                // summary has no row to lock yet.
                link.begin()?;
                let locked = on_pg!(link, "locking the session", |c| {
                    crate::memory::pg::lock_session(c, &plan.session_id)
                });
                if let Err(e) = locked {
                    let _ = link.rollback();
                    return Err(e);
                }
            }
        }
        let done = self.apply_compaction_in_tx(plan, given, now_ms, fence);
        match (&mut self.db, done.is_ok()) {
            (Backend::Lite(conn), ok) => {
                conn.execute_batch(if ok { "COMMIT" } else { "ROLLBACK" })?;
            }
            (Backend::Pg(link), true) => link.commit()?,
            (Backend::Pg(link), false) => {
                let _ = link.rollback();
            }
        }
        done
    }

    fn apply_compaction_in_tx(
        &mut self,
        plan: &CompactionPlan,
        given: Option<&str>,
        now_ms: i64,
        fence: Option<i64>,
    ) -> Result<Compaction, MemoryError> {
        let planned = plan.previous.as_ref().map_or(0, |p| p.summary_version);
        let current = self.check_fence(&plan.session_id, &plan.thread_key, fence)?;
        if current != planned {
            return Err(MemoryError::Stale {
                expected: planned,
                found: current,
            });
        }
        let (Some(first_folded), Some(last_folded)) = (plan.fold.first(), plan.fold.last()) else {
            return Err(MemoryError::Stale {
                expected: planned,
                found: current,
            });
        };
        let previous = plan.previous.as_ref();
        let extractive = || {
            let mut summary = previous
                .and_then(|p| Summary::parse(&p.body))
                .unwrap_or_default();
            summary.fold(
                plan.fold
                    .iter()
                    .map(|m| (m.role == Role::User, states_facts(m), m.text.as_str())),
            );
            summary.render()
        };
        let (body, source) = match given.map(Summary::validate) {
            Some(Ok(s)) => (s.render(), SummarySource::Caller),
            Some(Err(why)) => (extractive(), SummarySource::Fallback(why)),
            None => (extractive(), SummarySource::Extractive),
        };
        let version = planned + 1;
        let first = previous
            .and_then(|p| p.message_range.as_ref().map(|(from, _)| from.clone()))
            .unwrap_or_else(|| first_folded.message_id.clone());
        self.put_record(&NewRecord {
            session_id: &plan.session_id,
            kind: RecordKind::ThreadSummary,
            thread_key: &plan.thread_key,
            body: &body,
            summary_version: version,
            updated_at_ms: now_ms,
            message_range: Some((&first, &last_folded.message_id)),
        })?;
        let records = self.put_statements(plan, version, now_ms)?;
        if let Some(f) = fence {
            match &self.db {
                Backend::Lite(conn) => {
                    conn.execute(
                        "UPDATE records SET fence = MAX(fence, ?3)
                         WHERE session_id = ?1 AND kind = 'thread_summary' AND thread_key = ?2",
                        params![plan.session_id, plan.thread_key, f],
                    )?;
                }
                Backend::Pg(link) => on_pg!(link, "raising the fence", |c| {
                    pg_compaction::raise_fence(c, &plan.session_id, &plan.thread_key, f)
                })?,
            }
        }
        let kept = plan.kept.iter().map(|m| m.text.as_str());
        let folded = plan.fold.iter().map(|m| m.text.as_str());
        let previous_body = previous.as_ref().map_or("", |p| p.body.as_str());
        let before = counted_all(kept.clone().chain(folded).chain([previous_body]));
        let redacted = redact(&body);
        let after = counted_all(kept.chain([redacted.as_str()]));
        Ok(Compaction {
            trigger: plan.trigger,
            folded: plan.fold.len(),
            summary_version: version,
            tokens_before: before,
            tokens_after: after,
            source,
            records,
        })
    }

    /// Writes what the folded messages of `plan` state (the user's facts, preferences and
    /// outcomes; either side's decisions) as records of the lane, each with the message it
    /// came from; one the session holds
    /// already (the same kind and words) is not written again, and one that changes an
    /// earlier one supersedes it ([`MemoryStore::supersede`]). Returns how many it wrote.
    fn put_statements(
        &mut self,
        plan: &CompactionPlan,
        version: i64,
        now_ms: i64,
    ) -> Result<usize, MemoryError> {
        let mut written = 0;
        for m in &plan.fold {
            let prose = !states_facts(m);
            for (statement, body) in statements(&m.text) {
                // What the user states about themselves and their world, and decisions
                // either side takes: never an assistant's prose (its advice, apologies,
                // what it says of itself), though a short turn of the other side's is
                // what a person says.
                if prose && statement != Statement::Decision {
                    continue;
                }
                let kind = match statement {
                    Statement::Fact | Statement::Decision => RecordKind::Fact,
                    Statement::Preference => RecordKind::Preference,
                    Statement::Outcome => RecordKind::Outcome,
                };
                // The body as it is stored (redacted), read once for both checks.
                let stored = redact(&body);
                let held: bool = match &self.db {
                    Backend::Lite(conn) => conn
                        .prepare_cached(
                            "SELECT EXISTS (SELECT 1 FROM records
                             WHERE session_id = ?1 AND kind = ?2 AND body = ?3)",
                        )?
                        .query_row(params![plan.session_id, kind.as_str(), stored], |r| {
                            r.get(0)
                        })?,
                    Backend::Pg(link) => on_pg!(link, "reading statements", |c| {
                        pg_compaction::statement_held(c, &plan.session_id, kind, &stored)
                    })?,
                };
                if held {
                    continue;
                }
                let id = self.put_record(&NewRecord {
                    session_id: &plan.session_id,
                    kind,
                    thread_key: &plan.thread_key,
                    body: &body,
                    summary_version: version,
                    updated_at_ms: now_ms,
                    message_range: Some((&m.message_id, &m.message_id)),
                })?;
                // A statement that changes an earlier one (a new value) supersedes it.
                self.supersede(&plan.session_id, kind, id, &stored)?;
                written += 1;
            }
        }
        Ok(written)
    }

    /// [`MemoryStore::plan_compaction`] then [`MemoryStore::apply_compaction`] with the
    /// extractive summarizer: compacts a lane when `policy` says it is due at `now_ms`.
    /// `None` when nothing was due.
    pub fn compact(
        &mut self,
        session: &str,
        lane: &str,
        policy: &CompactionPolicy,
        now_ms: i64,
        force: bool,
    ) -> Result<Option<Compaction>, MemoryError> {
        match self.plan_compaction(session, lane, policy, now_ms, force)? {
            Some(plan) => self.apply_compaction(&plan, None, now_ms, None).map(Some),
            None => Ok(None),
        }
    }

    /// Writes a compaction a caller planned earlier (`planned`, as the plan it was handed
    /// names it) with its summary: the fence is checked first (a holder whose lock expired
    /// hears so before anything else is compared), then the plan is taken back as the store
    /// stands now (see [`MemoryStore::replan`]) and written (see
    /// [`MemoryStore::apply_compaction`]).
    pub fn apply_planned(
        &mut self,
        planned: &PlannedCompaction<'_>,
        given: Option<&str>,
        now_ms: i64,
        fence: Option<i64>,
    ) -> Result<Compaction, MemoryError> {
        self.check_fence(planned.session, planned.lane, fence)?;
        let plan = self.replan(
            planned.session,
            planned.lane,
            planned.version,
            planned.last_folded,
            planned.trigger,
        )?;
        self.apply_compaction(&plan, given, now_ms, fence)
    }
}
