//! Retrieval over the verbatim messages: every stored message is in a full-text index
//! (`messages_index`, SQLite FTS5), scoped to its session and lane, and a question finds
//! the messages that share its words, best first by BM25, each with the turns around it.
//!
//! What is indexed: the message's words, lower-cased, diacritics removed and stemmed
//! (Porter), so "researching" finds "research"; runs of scripts written without spaces
//! (Chinese, Japanese, Korean, Thai) as overlapping character pairs, so a two-character
//! word is found inside a longer run. A scope column holds two opaque tokens, one for the
//! session and one for the session's lane, so a search reads only the postings of its
//! own scope's messages (FTS5 seeks through the rest).
//!
//! What a question searches for: its distinct words that are not [`STOP_WORDS`] (all of
//! them when every word is one), and the character pairs of its unsegmented runs.
//!
//! Scope: the message's own lane, any match ([`MemoryStore::lane_hits`]); another lane of
//! the same session only with a strong match, one that holds every searched term of a
//! question of two terms or more ([`MemoryStore::strong_hits_elsewhere`]), or when the
//! message names that lane (the assembly then searches it as its own).
//!
//! Ranking: BM25 on the lane's own statistics, then a chat's signals ([`Signals`]): a
//! newer message ranks a little higher, and a message by the speaker the question is
//! about ("what did I say", "what did you suggest") higher still.

use super::db::MemoryError;
use super::store::{ChatMessage, MemoryStore, Role};
use rusqlite::{params, OptionalExtension};
use sha2::{Digest, Sha256};

/// Words a question is not searched by (unless it has no other): English function words
/// and the question words, which match every other message of a chat.
pub const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
    "be", "because", "been", "before", "being", "but", "by", "can", "could", "did", "do", "does",
    "doing", "for", "from", "get", "got", "had", "has", "have", "he", "her", "here", "hers", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "let", "me", "more", "most",
    "my", "no", "not", "now", "of", "on", "or", "other", "our", "out", "over", "re", "s", "she",
    "should", "so", "some", "such", "t", "than", "that", "the", "their", "them", "then", "there",
    "these", "they", "this", "those", "to", "too", "up", "us", "very", "was", "we", "were", "what",
    "whats", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", "yours", "ve", "ll", "d", "m", "don", "didn", "doesn", "isn", "wasn", "ok",
    "okay", "yes", "yeah",
];

/// Scripts written without spaces between words.
pub fn is_unsegmented(c: char) -> bool {
    matches!(u32::from(c),
        0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xF900..=0xFAFF | 0x0E00..=0x0E7F)
}

/// The text the index holds for a message: the message itself, with each run of an
/// unsegmented script replaced by its overlapping character pairs (a lone character stays
/// as it is), spaced so the tokenizer sees each pair as a word.
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut run: Vec<char> = Vec::new();
    for c in text.chars() {
        if is_unsegmented(c) {
            run.push(c);
            continue;
        }
        push_pairs(&mut out, &run);
        run.clear();
        out.push(c);
    }
    push_pairs(&mut out, &run);
    out
}

fn push_pairs(out: &mut String, run: &[char]) {
    match run {
        [] => {}
        [one] => {
            out.push(' ');
            out.push(*one);
            out.push(' ');
        }
        _ => {
            for pair in run.windows(2) {
                out.push(' ');
                out.push(pair[0]);
                out.push(pair[1]);
            }
            out.push(' ');
        }
    }
}

/// The scope tokens of a message of `session` in `lane`: `s` and `l` followed by the
/// first 64 bits of a SHA-256 of the session (and lane), in hex. Opaque, fixed-length,
/// one token each for the tokenizer; a search checks the stored session and lane of what
/// it finds, so a collision cannot leak another session's message.
pub fn scope_tokens(session: &str, lane: &str) -> String {
    format!("{} {}", session_token(session), lane_token(session, lane))
}

fn hex64(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn session_token(session: &str) -> String {
    format!("s{}", hex64(&[session]))
}

fn lane_token(session: &str, lane: &str) -> String {
    format!("l{}", hex64(&[session, lane]))
}

/// The terms a question is searched by, in the order they first appear, each once: its
/// words that are not [`STOP_WORDS`] (or all its words, when each is one), lower-cased,
/// and the character pairs of its unsegmented runs.
pub fn query_terms(text: &str) -> Vec<String> {
    let (words, stops) = split_terms(text);
    if words.is_empty() {
        stops
    } else {
        words
    }
}

/// The [`STOP_WORDS`] of a question that [`query_terms`] left out: what a search falls
/// back on when none of its other terms is in the lane ("Where is Sam from?" about a
/// chat where the name is never written).
pub fn fallback_terms(text: &str) -> Vec<String> {
    let (words, stops) = split_terms(text);
    if words.is_empty() {
        Vec::new()
    } else {
        stops
    }
}

fn split_terms(text: &str) -> (Vec<String>, Vec<String>) {
    let mut words: Vec<String> = Vec::new();
    let mut stops: Vec<String> = Vec::new();
    for token in text.split(|c: char| !c.is_alphanumeric()) {
        if token.is_empty() {
            continue;
        }
        let chars: Vec<char> = token.chars().collect();
        if chars.iter().any(|&c| is_unsegmented(c)) {
            // Split the token into its segmented and unsegmented runs.
            let mut i = 0;
            while i < chars.len() {
                let uns = is_unsegmented(chars[i]);
                let start = i;
                while i < chars.len() && is_unsegmented(chars[i]) == uns {
                    i += 1;
                }
                let part = &chars[start..i];
                if uns {
                    if part.len() == 1 {
                        push_once(&mut words, part[0].to_string());
                    }
                    for pair in part.windows(2) {
                        push_once(&mut words, pair.iter().collect());
                    }
                } else {
                    push_word(&mut words, &mut stops, &part.iter().collect::<String>());
                }
            }
        } else {
            push_word(&mut words, &mut stops, token);
        }
    }
    (words, stops)
}

fn push_word(words: &mut Vec<String>, stops: &mut Vec<String>, token: &str) {
    let lower = token.to_lowercase();
    if STOP_WORDS.contains(&lower.as_str()) {
        push_once(stops, lower);
    } else {
        push_once(words, lower);
    }
}

fn push_once(list: &mut Vec<String>, term: String) {
    if !list.contains(&term) {
        list.push(term);
    }
}

/// A term as an FTS5 string: quoted, so no query syntax gets through.
pub(super) fn fts_quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// An FTS5 expression over the body column: the terms, each quoted, joined by `op`.
fn body_expression(terms: &[String], op: &str) -> String {
    let quoted: Vec<String> = terms.iter().map(|t| fts_quote(t)).collect();
    format!("body : ({})", quoted.join(&format!(" {op} ")))
}

/// Where a search looks: a session's messages, or one lane's; those stored before
/// `below_seq`; written within a time window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HitScope<'a> {
    pub session: &'a str,
    /// `None`: every lane of the session.
    pub lane: Option<&'a str>,
    /// Only messages stored before this row (`i64::MAX`: all).
    pub below_seq: i64,
    /// Only messages written at or after this moment (ms since 1970).
    pub from_ms: Option<i64>,
    /// Only messages written at or before this moment (ms since 1970).
    pub until_ms: Option<i64>,
}

impl<'a> HitScope<'a> {
    /// Every message of `session`'s `lane`.
    pub fn lane(session: &'a str, lane: &'a str) -> Self {
        HitScope {
            session,
            lane: Some(lane),
            below_seq: i64::MAX,
            from_ms: None,
            until_ms: None,
        }
    }

    /// Whether a message written at `ts_ms` is in the time window.
    fn holds_time(&self, ts_ms: i64) -> bool {
        self.from_ms.is_none_or(|f| ts_ms >= f) && self.until_ms.is_none_or(|u| ts_ms <= u)
    }
}

/// A message found by a search: its row in `messages` and how well it matched (higher is
/// better).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub seq: i64,
    pub score: f64,
    /// How many of the searched terms it holds.
    pub terms: usize,
}

/// What ranking reads of a matching message besides its words.
#[derive(Debug, Clone, Copy)]
struct RankingRow {
    chars: usize,
    ts_ms: i64,
    role: Option<Role>,
}

/// BM25's term-frequency saturation (here: how much a long message is discounted).
pub const BM25_K1: f64 = 1.2;
/// BM25's length normalization: 0 ignores a message's length, 1 divides by it.
pub const BM25_B: f64 = 0.75;

/// The most a message's length can lift its score: BM25's factor for a message of no
/// length, `(k1 + 1) / (1 + k1 (1 - b))`.
const MAX_LIFT: f64 = (BM25_K1 + 1.0) / (1.0 + BM25_K1 * (1.0 - BM25_B));
/// Matches whose lengths are read at a time.
const LENGTH_CHUNK: usize = 256;

/// The inverse document frequency of a term found in `df` of `n` messages (BM25's, never
/// negative).
pub fn idf(n: usize, df: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)] // message counts are far below 2^53
    let (n, df) = (n as f64, df as f64);
    (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
}

/// How much more a message just written ranks than one long past: its score is raised by
/// up to this share, halving every [`RECENCY_HALF_LIFE_MS`]. Small on purpose: a chat is
/// asked about last month as often as about this morning, so the words decide, and age
/// only settles what they leave close.
pub const RECENCY_WEIGHT: f64 = 0.1;
/// How long it takes a message's recency lift to halve: a week.
pub const RECENCY_HALF_LIFE_MS: f64 = 7.0 * 86_400_000.0;
/// The factor for a message by the speaker a question is about ("what did I say…": the
/// user's messages; "what did you recommend…": the assistant's).
pub const SPEAKER_WEIGHT: f64 = 1.2;

/// What a chat adds to a match's words when it is ranked: how old the message is, and
/// whose it is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signals {
    /// The moment ages are counted from (ms since 1970); `None`: age is not a signal.
    pub now_ms: Option<i64>,
    /// The role whose messages the question is about, if it says.
    pub speaker: Option<Role>,
}

impl Signals {
    /// BM25 alone.
    pub const NONE: Signals = Signals {
        now_ms: None,
        speaker: None,
    };

    /// The signals of `question`, asked at `now_ms`.
    pub fn of(question: &str, now_ms: i64) -> Signals {
        Signals {
            now_ms: Some(now_ms),
            speaker: speaker_of(question),
        }
    }

    /// The most [`Signals::factor`] can be.
    fn max_factor(&self) -> f64 {
        let recency = if self.now_ms.is_some() {
            1.0 + RECENCY_WEIGHT
        } else {
            1.0
        };
        let speaker = if self.speaker.is_some() {
            SPEAKER_WEIGHT
        } else {
            1.0
        };
        recency * speaker
    }

    /// What a message written at `ts_ms` by `role` multiplies its score by.
    pub fn factor(&self, ts_ms: i64, role: Option<Role>) -> f64 {
        let mut f = 1.0;
        if let Some(now) = self.now_ms {
            #[allow(clippy::cast_precision_loss)] // ages in ms are far below 2^53
            let age = now.saturating_sub(ts_ms).max(0) as f64;
            f *= 1.0 + RECENCY_WEIGHT * (-age / RECENCY_HALF_LIFE_MS).exp2();
        }
        if self.speaker.is_some() && self.speaker == role {
            f *= SPEAKER_WEIGHT;
        }
        f
    }
}

/// Whose messages a question is about: the user's when it speaks of "I", "me", "my" and not
/// of "you"; the assistant's when it speaks of "you" and not of "I"; else nobody's.
pub fn speaker_of(question: &str) -> Option<Role> {
    const FIRST: &[&str] = &["i", "me", "my", "mine", "myself"];
    const SECOND: &[&str] = &["you", "your", "yours", "yourself"];
    let (mut first, mut second) = (false, false);
    for word in question.split(|c: char| !c.is_alphanumeric()) {
        let w = word.to_lowercase();
        first |= FIRST.contains(&w.as_str());
        second |= SECOND.contains(&w.as_str());
    }
    match (first, second) {
        (true, false) => Some(Role::User),
        (false, true) => Some(Role::Assistant),
        _ => None,
    }
}

impl MemoryStore {
    /// Adds a stored message to the index (`seq` is its row in `messages`).
    pub(super) fn index_message(
        &self,
        seq: i64,
        session: &str,
        lane: &str,
        text: &str,
    ) -> Result<(), MemoryError> {
        self.conn
            .prepare_cached("INSERT INTO messages_index (rowid, scope, body) VALUES (?1, ?2, ?3)")?
            .execute(params![seq, scope_tokens(session, lane), index_text(text)])?;
        Ok(())
    }

    /// The rows of the index that match `expression`, oldest first (FTS5 reads a doclist
    /// forward page by page; backward it loads it whole).
    fn matching(&self, expression: &str) -> Result<Vec<i64>, MemoryError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT rowid FROM messages_index WHERE messages_index MATCH ?1")?;
        let rows = stmt.query_map(params![expression], |r| r.get::<_, i64>(0))?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// How many messages `lane` of `session` holds, and their mean length in characters.
    pub fn lane_stats(&self, session: &str, lane: &str) -> Result<(usize, f64), MemoryError> {
        let (n, chars): (i64, i64) = self
            .conn
            .prepare_cached(
                "SELECT messages, chars FROM lane_stats WHERE session_id = ?1 AND thread_key = ?2",
            )?
            .query_row(params![session, lane], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?
            .unwrap_or((0, 0));
        #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
        let mean = if n > 0 { chars as f64 / n as f64 } else { 0.0 };
        Ok((usize::try_from(n).unwrap_or(0), mean))
    }

    /// How many messages `session` holds in all its lanes, and their mean length in
    /// characters.
    pub fn session_stats(&self, session: &str) -> Result<(usize, f64), MemoryError> {
        let (n, chars): (i64, i64) = self
            .conn
            .prepare_cached(
                "SELECT coalesce(sum(messages), 0), coalesce(sum(chars), 0) FROM lane_stats
                 WHERE session_id = ?1",
            )?
            .query_row(params![session], |r| Ok((r.get(0)?, r.get(1)?)))?;
        #[allow(clippy::cast_precision_loss)] // counts are far below 2^53
        let mean = if n > 0 { chars as f64 / n as f64 } else { 0.0 };
        Ok((usize::try_from(n).unwrap_or(0), mean))
    }

    /// The messages of `lane` older than `below_seq` that hold any of `terms`, best
    /// first, at most `limit`, with the weight of each term (its IDF in the lane; 0 for
    /// a term no message of the lane holds).
    ///
    /// BM25 over the lane: a message scores, for each term it holds, the term's IDF
    /// counted among the lane's messages, saturated by the message's length against the
    /// lane's mean length ([`BM25_K1`], [`BM25_B`]; a term counts once per
    /// message: chat messages are short, and one said twice is rarely more relevant).
    /// Ties go to the newer message. The statistics are the lane's own, so a search
    /// costs what the lane's matching messages cost, whatever else the file holds.
    pub fn lane_hits(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        below_seq: i64,
        limit: usize,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        self.ranked_lane_hits(session, lane, terms, below_seq, limit, &Signals::NONE)
    }

    /// [`MemoryStore::lane_hits`] with a chat's signals: each message's BM25 score is
    /// multiplied by [`Signals::factor`] (a little for a newer message, more for one by
    /// the speaker the question is about).
    pub fn ranked_lane_hits(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        below_seq: i64,
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        let scope = HitScope {
            below_seq,
            ..HitScope::lane(session, lane)
        };
        self.ranked_hits(&scope, terms, limit, signals)
    }

    /// The messages of `scope` that hold any of `terms`, best first, at most `limit`,
    /// ranked as [`MemoryStore::ranked_lane_hits`] ranks a lane's (with the statistics of
    /// the scope: the lane's, or the whole session's), and the weight of each term.
    pub fn ranked_hits(
        &self,
        scope: &HitScope<'_>,
        terms: &[String],
        limit: usize,
        signals: &Signals,
    ) -> Result<(Vec<Hit>, Vec<f64>), MemoryError> {
        if terms.is_empty() || limit == 0 {
            return Ok((Vec::new(), Vec::new()));
        }
        let (n, mean, scope_token) = match scope.lane {
            Some(lane) => {
                let (n, mean) = self.lane_stats(scope.session, lane)?;
                (n, mean, lane_token(scope.session, lane))
            }
            None => {
                let (n, mean) = self.session_stats(scope.session)?;
                (n, mean, session_token(scope.session))
            }
        };
        let below_seq = scope.below_seq;
        let mut idfs: std::collections::HashMap<i64, (f64, usize)> =
            std::collections::HashMap::new();
        let mut weights = Vec::with_capacity(terms.len());
        for t in terms {
            let expression = format!(
                "scope : \"{scope_token}\" AND {}",
                body_expression(std::slice::from_ref(t), "OR")
            );
            let rows = self.matching(&expression)?;
            // A term the lane never holds weighs nothing (and says so to the caller).
            let w = if rows.is_empty() {
                0.0
            } else {
                idf(n.max(rows.len()), rows.len())
            };
            weights.push(w);
            for seq in rows.into_iter().filter(|&s| s < below_seq) {
                let e = idfs.entry(seq).or_insert((0.0, 0));
                e.0 += w;
                e.1 += 1;
            }
        }
        if idfs.is_empty() {
            return Ok((Vec::new(), weights));
        }
        // Best first by terms alone; lengths are read a chunk at a time, and no more once
        // the next chunk's best could not reach the `limit`-th score even at the shortest
        // length and with every signal for it (the most they can lift a score).
        let mut candidates: Vec<(i64, f64, usize)> = idfs
            .into_iter()
            .map(|(seq, (sum, terms))| (seq, sum, terms))
            .collect();
        candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        let max_lift = MAX_LIFT * signals.max_factor();
        let mut hits: Vec<Hit> = Vec::with_capacity(limit + LENGTH_CHUNK);
        for chunk in candidates.chunks(LENGTH_CHUNK) {
            if hits.len() >= limit && chunk[0].1 * max_lift < hits[limit - 1].score {
                break;
            }
            let rows = self.ranking_rows(chunk.iter().map(|c| c.0))?;
            // Each match's row is read once: for the time window and for its score.
            hits.extend(chunk.iter().filter_map(|&(seq, sum, terms)| {
                let row = rows.get(&seq).copied().unwrap_or(RankingRow {
                    chars: 0,
                    ts_ms: 0,
                    role: None,
                });
                if !scope.holds_time(row.ts_ms) {
                    return None;
                }
                #[allow(clippy::cast_precision_loss)]
                let dl = row.chars as f64;
                let norm = 1.0 - BM25_B + BM25_B * dl / mean.max(1.0);
                Some(Hit {
                    seq,
                    score: sum * (BM25_K1 + 1.0) / (1.0 + BM25_K1 * norm)
                        * signals.factor(row.ts_ms, row.role),
                    terms,
                })
            }));
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
            hits.truncate(limit);
        }
        Ok((hits, weights))
    }

    /// What ranking reads of each stored message of `seqs` (its length in characters, when
    /// and by whom it was written), in one statement.
    fn ranking_rows(
        &self,
        seqs: impl Iterator<Item = i64>,
    ) -> Result<std::collections::HashMap<i64, RankingRow>, MemoryError> {
        let list =
            serde_json::Value::Array(seqs.map(serde_json::Value::from).collect()).to_string();
        let mut stmt = self.conn.prepare_cached(
            "SELECT m.seq, length(m.text), m.ts_ms, m.role
             FROM json_each(?1) j JOIN messages m ON m.seq = j.value",
        )?;
        let rows = stmt.query_map(params![list], |r| {
            let role = Some(Role::parse(r.get_ref(3)?.as_str().unwrap_or("")));
            Ok((
                r.get::<_, i64>(0)?,
                RankingRow {
                    chars: usize::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                    ts_ms: r.get(2)?,
                    role,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The messages of the session's other lanes that hold every one of `terms` (two or
    /// more), newest first, at most `limit`.
    pub fn strong_hits_elsewhere(
        &self,
        session: &str,
        lane: &str,
        terms: &[String],
        limit: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        if terms.len() < 2 || limit == 0 {
            return Ok(Vec::new());
        }
        // The message's own lane is left out by the index, not read and dropped.
        let expression = format!(
            "(scope : \"{}\" AND {}) NOT scope : \"{}\"",
            session_token(session),
            body_expression(terms, "AND"),
            lane_token(session, lane)
        );
        let mut out = Vec::new();
        // Newest first.
        for seq in self.matching(&expression)?.into_iter().rev() {
            if out.len() >= limit {
                break;
            }
            match self.message_in(session, seq)? {
                Some(m) if m.thread_key != lane => out.push(m),
                _ => {}
            }
        }
        Ok(out)
    }

    /// The oldest stored message of `session` among `ids`: its seq.
    pub fn oldest_seq_of(&self, session: &str, ids: &[&str]) -> Result<Option<i64>, MemoryError> {
        if ids.is_empty() {
            return Ok(None);
        }
        let list =
            serde_json::Value::Array(ids.iter().map(|&i| serde_json::Value::from(i)).collect())
                .to_string();
        Ok(self
            .conn
            .prepare_cached(
                "SELECT min(m.seq) FROM json_each(?2) j
                 JOIN messages m ON m.session_id = ?1 AND m.message_id = j.value",
            )?
            .query_row(params![session, list], |r| r.get(0))?)
    }

    /// The stored message of `session` whose id is `message_id`.
    pub fn message_by_id(
        &self,
        session: &str,
        message_id: &str,
    ) -> Result<Option<ChatMessage>, MemoryError> {
        self.one_message(
            "session_id = ?1 AND message_id = ?2",
            params![session, message_id],
        )
    }

    /// The stored message of `session` at `seq` (`None` for another session's).
    pub fn message_in(&self, session: &str, seq: i64) -> Result<Option<ChatMessage>, MemoryError> {
        self.one_message("seq = ?1 AND session_id = ?2", params![seq, session])
    }

    /// The stored message that meets `condition` (a unique key), if any.
    fn one_message(
        &self,
        condition: &str,
        values: impl rusqlite::Params,
    ) -> Result<Option<ChatMessage>, MemoryError> {
        Ok(self
            .conn
            .prepare_cached(&format!(
                "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages WHERE {condition}"
            ))?
            .query_row(values, super::store::chat_row)
            .optional()?)
    }

    /// Up to `n` messages of the message's lane just before (`after` false, newest first)
    /// or just after (`after` true, oldest first) the stored message at `seq`.
    pub fn lane_neighbours(
        &self,
        session: &str,
        lane: &str,
        seq: i64,
        after: bool,
        n: usize,
    ) -> Result<Vec<ChatMessage>, MemoryError> {
        let mut stmt = self.conn.prepare_cached(&neighbours_sql(after, n))?;
        let rows = stmt.query_map(params![session, lane, seq], super::store::chat_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

/// The statement of [`MemoryStore::lane_neighbours`]. Its LIMIT is written in, not bound:
/// SQLite plans a statement with a bound LIMIT again for every new value.
pub(super) fn neighbours_sql(after: bool, n: usize) -> String {
    let (cmp, order) = if after { (">", "ASC") } else { ("<", "DESC") };
    format!(
        "SELECT seq, message_id, thread_key, role, text, ts_ms, reply_to FROM messages
         WHERE session_id = ?1 AND thread_key = ?2 AND seq {cmp} ?3 ORDER BY seq {order} LIMIT {n}"
    )
}

/// Indexes the messages stored before the index existed (a file from an older version),
/// in the transaction that creates the index.
pub(super) fn backfill(tx: &rusqlite::Transaction<'_>) -> Result<(), MemoryError> {
    let mut read =
        tx.prepare("SELECT seq, session_id, thread_key, text FROM messages ORDER BY seq")?;
    let mut write =
        tx.prepare("INSERT INTO messages_index (rowid, scope, body) VALUES (?1, ?2, ?3)")?;
    let mut rows = read.query([])?;
    while let Some(r) = rows.next()? {
        let seq: i64 = r.get(0)?;
        let session: String = r.get(1)?;
        let lane: String = r.get(2)?;
        let text: String = r.get(3)?;
        write.execute(params![
            seq,
            scope_tokens(&session, &lane),
            index_text(&text)
        ])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
