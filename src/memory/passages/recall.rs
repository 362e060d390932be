//! A question's search as the memory runs it: whose turns it is about (the "I" and "you"
//! it says, or a name the conversation tells the owner of), when, and two rounds, the
//! second with the words the first one's best turns lend ([`super::expand`]).

use super::expand::{
    asks_preference, asks_when, feedback_terms, name_candidates, FEEDBACK_TURNS, GREETINGS,
    TIME_TERMS, TIME_WEIGHT,
};
use super::terms::{body_expression, fallback_terms, query_terms, session_token};
use super::{Hit, HitScope, Signals};
use crate::memory::db::MemoryError;
use crate::memory::message::Role;
use crate::memory::pg::reads;
use crate::memory::store::{on_pg, Backend, MemoryStore, NAME_OWNERS_MAX};
use std::collections::HashMap;

/// The matches a second round ranks; the first round's other matches follow them.
pub const SECOND_ROUND_HITS: usize = 20;
/// A question of this many search words or fewer always gets a second round (unless it
/// asks what someone likes): its best matches tell what it is about better than its one
/// word does.
pub const SPARSE_TERMS: usize = 1;
/// The messages naming someone that are read to tell who they are.
pub const NAME_SAMPLE: usize = 64;
/// The fewest letters of a short form of a name ("Mel" for "Melanie", "Jon" for
/// "Jonathan").
pub const NICKNAME_MIN_CHARS: usize = 3;
/// How a question is searched.
#[derive(Debug, Clone, PartialEq)]
pub struct Recall {
    /// The question's search terms ([`query_terms`]), less the names of a speaker the
    /// ranking already favours by role (the other speaker's turns are those that write
    /// the name).
    pub terms: Vec<String>,
    /// The names the question is about whose owner the conversation tells.
    pub names: Vec<String>,
    /// Words searched besides the terms, with what each weighs against one of them: the
    /// words that tell a time, for a question asking when.
    pub added: Vec<(String, f64)>,
    /// The chat's signals: recency, the speaker it is about, the time it names.
    pub signals: Signals,
    /// It asks what someone likes ([`asks_preference`]): what they said they like joins
    /// its matches ([`MemoryStore::with_stated`]).
    pub preference: bool,
}

impl MemoryStore {
    /// How `question` is searched in `session`, asked at `now_ms`.
    ///
    /// Whose turns it is about: the role its "I" or "you" names ([`super::speaker_of`]),
    /// else the owner of the names it mentions: the role `speakers` gives a word of the
    /// name, or the one the conversation tells (see [`MemoryStore::name_owner`]).
    pub fn recall(
        &self,
        session: &str,
        question: &str,
        now_ms: i64,
        speakers: &[(String, Role)],
    ) -> Result<Recall, MemoryError> {
        let mut terms = query_terms(question);
        let mut signals = Signals::of(question, now_ms);
        let mut names = Vec::new();
        if signals.speaker.is_none() {
            let mut owner: Option<Role> = None;
            // A host that names both speakers has told who writes: a name it does not
            // give is a third person's, with nothing to work out from the conversation.
            let told_both = [Role::User, Role::Assistant]
                .iter()
                .all(|r| speakers.iter().any(|(_, s)| s == r));
            for name in name_candidates(question) {
                let whose = match told_owner(speakers, &name) {
                    Some(r) => Some(r),
                    None if told_both => None,
                    None => self.owner_by_any_name(session, &name)?,
                };
                match (whose, owner) {
                    (None, _) => {}
                    (Some(r), None) => {
                        owner = Some(r);
                        names.push(name);
                    }
                    (Some(r), Some(o)) if r == o => names.push(name),
                    // Two names of two speakers: the question is about both.
                    (Some(_), Some(_)) => {
                        owner = None;
                        names.clear();
                        break;
                    }
                }
            }
            signals.speaker = owner;
            if terms.iter().any(|t| !names.contains(t)) {
                terms.retain(|t| !names.contains(t));
            } else if !names.is_empty() {
                // Only the name: the speaker's own turns seldom hold it (the other one
                // greets them by it), so the question's common words are what is left to
                // search by ("Where is Sam from?").
                let common = fallback_terms(question);
                if !common.is_empty() {
                    terms = common;
                }
            }
        }
        let added = if asks_when(question) {
            TIME_TERMS
                .iter()
                .filter(|t| !terms.iter().any(|q| q == *t))
                .map(|t| ((*t).to_string(), TIME_WEIGHT))
                .collect()
        } else {
            Vec::new()
        };
        Ok(Recall {
            terms,
            names,
            added,
            signals,
            preference: asks_preference(question),
        })
    }

    /// The matches of `recall` in `scope`, best first, at most `limit`, and the weights
    /// of its terms: a first round by its terms and added words, then, when its best
    /// match lacks some of the question's words (the question may say what it wants in
    /// other words than the turn that has it) or the question has a single search word
    /// ([`SPARSE_TERMS`]) and does not ask what someone likes (what they said they like
    /// is its second round: [`MemoryStore::with_stated`]), a second with the words its
    /// best turns lend ([`feedback_terms`]), those turns keeping their first score.
    pub fn recall_hits(
        &self,
        scope: &HitScope<'_>,
        recall: &Recall,
        limit: usize,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        if recall.terms.is_empty() || limit == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let mut m = self.matches_in(scope)?;
        self.add_terms(
            &mut m,
            &super::tally::first_round(&recall.terms, &recall.added),
        )?;
        let first = self.rank(&m, limit.max(FEEDBACK_TURNS), &recall.signals)?;
        // A first round whose best match holds every one of the question's words has found
        // what the question says: a second would only drift from it. Unless the question
        // says little (one word: "What does Ann do on weekends?"), when what it asks may be
        // in several turns, gathered by the words its best matches share ("climbing"); but
        // for a question about what someone likes, what they said they like gathers them.
        let sparse = recall.terms.len() <= SPARSE_TERMS && !recall.preference;
        if first
            .first()
            .is_none_or(|best| best.terms >= recall.terms.len() && !sparse)
        {
            let mut first = first;
            first.truncate(limit);
            return Ok((first, m.weights));
        }
        // Read in one call (one round trip on PostgreSQL).
        let seqs: Vec<i64> = first.iter().take(FEEDBACK_TURNS).map(|h| h.seq).collect();
        let mut read: HashMap<i64, String> = self
            .messages_at(scope.session, &seqs)?
            .into_iter()
            .map(|m| (m.seq, m.text))
            .collect();
        let texts: Vec<(String, f64)> = first
            .iter()
            .take(FEEDBACK_TURNS)
            .filter_map(|h| Some((read.remove(&h.seq)?, h.score)))
            .collect();
        let turns: Vec<(&str, f64)> = texts.iter().map(|(t, s)| (t.as_str(), *s)).collect();
        let known: Vec<String> = recall.terms.iter().chain(&recall.names).cloned().collect();
        let lent = feedback_terms(&known, &turns);
        if lent.is_empty() {
            let mut first = first;
            first.truncate(limit);
            return Ok((first, m.weights));
        }
        // Only the words lent are searched: the first round's tally stands.
        let lent: Vec<(&str, f64, bool)> =
            lent.iter().map(|(t, w)| (t.as_str(), *w, false)).collect();
        self.add_terms(&mut m, &lent)?;
        // The second round ranks its best few; the first round's other matches follow.
        let mut second = self.rank(
            &m,
            SECOND_ROUND_HITS.min(limit) + turns.len(),
            &recall.signals,
        )?;
        // The turns that lent their words keep their first score: the words find others
        // like them, and do not lift them over the rest by their own words.
        for h in &mut second {
            if let Some(f) = first.iter().take(turns.len()).find(|f| f.seq == h.seq) {
                *h = *f;
            }
        }
        second.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
        second.truncate(SECOND_ROUND_HITS.min(limit));
        let rest: Vec<Hit> = first
            .into_iter()
            .filter(|f| second.iter().all(|h| h.seq != f.seq))
            .collect();
        second.extend(rest);
        second.truncate(limit);
        Ok((second, m.weights))
    }

    /// Whose turns `name` (lower-cased) is in `session`: by the name itself
    /// ([`MemoryStore::name_owner`]), else by a short form of it the conversation uses
    /// ("Mel" for "Melanie": a start of the name of at least [`NICKNAME_MIN_CHARS`]
    /// letters, the longest that tells an owner).
    pub fn owner_by_any_name(
        &self,
        session: &str,
        name: &str,
    ) -> Result<Option<Role>, MemoryError> {
        if let Some(role) = self.name_owner(session, name)? {
            return Ok(Some(role));
        }
        let starts: Vec<usize> = name
            .char_indices()
            .map(|(i, _)| i)
            .skip(NICKNAME_MIN_CHARS)
            .collect();
        for &end in starts.iter().rev() {
            if let Some(role) = self.name_owner(session, &name[..end])? {
                return Ok(Some(role));
            }
        }
        Ok(None)
    }

    /// Whose turns `name` (lower-cased) is in `session`, when the conversation tells it:
    /// the speaker the other one addresses by it ("Hey Ann!", "Thanks, Ann.", "Ann, look")
    /// in the first [`NAME_SAMPLE`] messages naming it, when every such greeting is by the
    /// same one. A name only talked about (a friend, a city) is nobody's. Once
    /// [`NAME_SAMPLE`] messages name it, the answer is final (messages are only added after
    /// them) and kept: it is worked out once.
    pub fn name_owner(&self, session: &str, name: &str) -> Result<Option<Role>, MemoryError> {
        if let Some(known) = self
            .name_owners
            .borrow()
            .get(session)
            .and_then(|names| names.get(name))
        {
            return Ok(*known);
        }
        let version = match &self.db {
            Backend::Lite(conn) => conn.query_row("PRAGMA data_version", [], |r| r.get(0))?,
            Backend::Pg(link) => on_pg!(link, "reading the messages' version", |c| {
                reads::messages_version(c)
            })?,
        };
        let stamp = (self.writes.get(), version);
        {
            let mut guesses = self.name_guesses.borrow_mut();
            if guesses.stamp != stamp {
                guesses.by_session.clear();
                guesses.stamp = stamp;
            }
            if let Some(known) = guesses.by_session.get(session).and_then(|n| n.get(name)) {
                return Ok(*known);
            }
        }
        // The first ones: FTS5 reads a doclist forward a page at a time.
        let rows = match &self.db {
            Backend::Lite(_) => self.matching_first(
                &format!(
                    "scope : \"{}\" AND {}",
                    session_token(session),
                    body_expression(&[name.to_string()], "OR")
                ),
                NAME_SAMPLE,
            )?,
            Backend::Pg(link) => {
                let tokens = link.terms.of_query_term(name)?;
                let token = session_token(session);
                on_pg!(link, "finding a name", |c| reads::first_rows(
                    c,
                    &token,
                    &tokens,
                    NAME_SAMPLE
                ))?
            }
        };
        if rows.is_empty() {
            keep_name(
                &mut self.name_guesses.borrow_mut().by_session,
                session,
                name,
                None,
            );
            return Ok(None);
        }
        let sampled = rows.len();
        let mut by = [0usize; 2];
        for (role, text) in self.speakers_of(session, &rows)? {
            if addresses(&text, name) {
                by[usize::from(role == Role::Assistant)] += 1;
            }
        }
        let owner = match by {
            [0, 0] => None,
            [_, 0] => Some(Role::Assistant),
            [0, _] => Some(Role::User),
            _ => None,
        };
        if sampled < NAME_SAMPLE {
            keep_name(
                &mut self.name_guesses.borrow_mut().by_session,
                session,
                name,
                owner,
            );
        } else {
            keep_name(&mut self.name_owners.borrow_mut(), session, name, owner);
        }
        Ok(owner)
    }
}

/// Keeps `owner` as what `name` is in `session` in `book` (by session, then name), which
/// starts over once it holds [`NAME_OWNERS_MAX`] names.
impl MemoryStore {
    /// Who wrote each message of `session` at `rows`, and its text, in no order; read
    /// past the store's kept messages (a name's sample is read once).
    fn speakers_of(&self, session: &str, rows: &[i64]) -> Result<Vec<(Role, String)>, MemoryError> {
        match &self.db {
            Backend::Lite(conn) => {
                let mut stmt = conn.prepare_cached(
                    "SELECT m.role, m.text FROM json_each(?1) j JOIN messages m ON m.seq = j.value
                     WHERE m.session_id = ?2",
                )?;
                let list = super::json_list(rows.iter().copied());
                let read = stmt.query_map(rusqlite::params![list, session], |r| {
                    Ok((Role::parse(r.get_ref(0)?.as_str().unwrap_or("")), r.get(1)?))
                })?;
                Ok(read.collect::<Result<Vec<_>, _>>()?)
            }
            Backend::Pg(link) => Ok(on_pg!(link, "reading messages", |c| reads::messages_at(
                c, rows
            ))?
            .into_iter()
            .filter(|(owner, _)| owner == session)
            .map(|(_, m)| (m.role, m.text))
            .collect()),
        }
    }
}

fn keep_name(
    book: &mut HashMap<String, HashMap<String, Option<Role>>>,
    session: &str,
    name: &str,
    owner: Option<Role>,
) {
    if book.values().map(HashMap::len).sum::<usize>() >= NAME_OWNERS_MAX {
        book.clear();
    }
    book.entry(session.to_string())
        .or_default()
        .insert(name.to_string(), owner);
}

/// The role `speakers` gives `name` (lower-cased): a word of a speaker's name, or its start
/// of at least [`NICKNAME_MIN_CHARS`] letters ("mel" for "melanie").
fn told_owner(speakers: &[(String, Role)], name: &str) -> Option<Role> {
    let exact = speakers.iter().find(|(n, _)| n == name);
    let short = || {
        (name.chars().count() >= NICKNAME_MIN_CHARS)
            .then(|| speakers.iter().find(|(n, _)| n.starts_with(name)))
            .flatten()
    };
    exact.or_else(short).map(|s| s.1)
}

/// Whether `text` addresses someone as `name` (lower-cased): the name after a greeting
/// word ("hey ann"), or standing apart at the start or after a comma and followed by a
/// comma, a stop or the end ("Ann, look", "thanks, Ann!").
pub fn addresses(text: &str, name: &str) -> bool {
    let lower = text.to_lowercase();
    let mut from = 0;
    while let Some(at) = lower[from..].find(name).map(|i| i + from) {
        from = at + name.len();
        let before = &lower[..at];
        let after = &lower[from..];
        if before
            .chars()
            .next_back()
            .is_some_and(char::is_alphanumeric)
            || after.chars().next().is_some_and(char::is_alphanumeric)
        {
            continue; // inside another word
        }
        let prev_word = before
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .rsplit(|c: char| !c.is_alphanumeric())
            .next()
            .unwrap_or("");
        let gap = before[before
            .trim_end_matches(|c: char| !c.is_alphanumeric())
            .len()..]
            .trim();
        if GREETINGS.contains(&prev_word) && !gap.contains(['.', '!', '?']) {
            return true;
        }
        let apart_before =
            before.trim_end().is_empty() || before.trim_end().ends_with([',', '.', '!', '?']);
        let apart_after = after.trim_start().is_empty() || after.starts_with([',', '!', '?', '.']);
        if apart_before && apart_after {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests;
