//! Storing messages: one by one, in batches and as a host's accepted turns, each once,
//! in the lane its placement gives (a reply joins the lane of the message it answers).

use super::*;

/// Messages and characters stored per (session, lane) by one batch.
type LaneTally = std::collections::HashMap<(String, String), (i64, i64)>;

impl MemoryStore {
    /// Stores a message verbatim and returns its thread key. Storing the same message id of
    /// a session again changes nothing and returns the key it was stored under.
    pub fn ingest(&mut self, m: &NewMessage<'_>) -> Result<String, MemoryError> {
        let mut out = self.ingest_batch(std::slice::from_ref(m))?;
        Ok(out.pop().map(|i| i.thread_key).unwrap_or_default())
    }

    /// Stores messages in one transaction: all of them or, on an error, none. Returns
    /// where each message went.
    pub fn ingest_batch(
        &mut self,
        messages: &[NewMessage<'_>],
    ) -> Result<Vec<Ingested>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                let out = link.call(
                    "storing messages",
                    pg_messages::ingest_batch(link.pool(), &link.terms, messages),
                )?;
                self.count_writes(&out);
                return Ok(out);
            }
        };
        let tx = conn.unchecked_transaction()?;
        let mut tally = LaneTally::default();
        let out = messages
            .iter()
            .map(|m| self.insert(m, &mut tally))
            .collect::<Result<Vec<_>, _>>()?;
        self.add_lane_stats(&tally)?;
        tx.commit()?;
        Ok(out)
    }

    /// Stores one accepted turn of a host, keyed by the host's `advancement_key`, in one
    /// transaction: its messages and the key, or, when the key was committed before (a
    /// host retry), nothing. Where each message went when it was committed now; `None`
    /// for a duplicate.
    pub fn commit_turn(
        &mut self,
        advancement_key: &str,
        session: &str,
        messages: &[NewMessage<'_>],
        now_ms: i64,
    ) -> Result<Option<Vec<Ingested>>, MemoryError> {
        let conn = match &self.db {
            Backend::Lite(conn) => conn,
            Backend::Pg(link) => {
                let out = link.call(
                    "committing a turn",
                    pg_messages::commit_turn(
                        link.pool(),
                        &link.terms,
                        advancement_key,
                        session,
                        messages,
                        now_ms,
                    ),
                )?;
                self.count_writes(out.as_deref().unwrap_or_default());
                return Ok(out);
            }
        };
        let tx = conn.unchecked_transaction()?;
        let fresh = conn
            .prepare_cached(
                "INSERT INTO turns (advancement_key, session_id, committed_at_ms) VALUES (?1, ?2, ?3)
                 ON CONFLICT (advancement_key) DO NOTHING",
            )?
            .execute(params![advancement_key, session, now_ms])?
            == 1;
        let mut stored = None;
        if fresh {
            let mut tally = LaneTally::default();
            let mut out = Vec::with_capacity(messages.len());
            for m in messages {
                out.push(self.insert(m, &mut tally)?);
            }
            self.add_lane_stats(&tally)?;
            stored = Some(out);
        }
        tx.commit()?;
        Ok(stored)
    }

    /// Counts the messages a batch wrote among the store's writes.
    fn count_writes(&self, out: &[Ingested]) {
        let n = out.iter().filter(|i| i.ingested).count() as u64;
        self.writes.set(self.writes.get().wrapping_add(n));
    }

    /// Adds what a batch stored to its lanes' statistics (one write per lane).
    fn add_lane_stats(&self, tally: &LaneTally) -> Result<(), MemoryError> {
        let mut stmt = self.db.lite()?.prepare_cached(
            "INSERT INTO lane_stats (session_id, thread_key, messages, chars) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (session_id, thread_key) DO UPDATE SET
                 messages = messages + excluded.messages, chars = chars + excluded.chars",
        )?;
        // In key order: the same file gets the same writes in the same order.
        let mut lanes: Vec<_> = tally.iter().collect();
        lanes.sort();
        for ((session, lane), (messages, chars)) in lanes {
            stmt.execute(params![session, lane, messages, chars])?;
        }
        Ok(())
    }

    /// Stores one message (see [`Ingested`]).
    fn insert(&self, m: &NewMessage<'_>, tally: &mut LaneTally) -> Result<Ingested, MemoryError> {
        let placement = Placement {
            chat_id: m.chat_id,
            topic_id: m.topic_id,
            reply_to: m.reply_to,
        };
        // Only a reply outside a topic looks up what is stored to find its lane.
        let key = thread_key(&placement, |id| {
            self.lane_of(m.session_id, id).ok().flatten()
        });
        if self.insert_as(m, m.message_id, &key, tally)? {
            return Ok(Ingested {
                thread_key: key,
                ingested: true,
                stored_as: None,
            });
        }
        // The id is stored already. In the same lane, or with the same role and text, it
        // is this message again: nothing is written. In another lane with other words, it
        // is another message under a reused id (a provider or proxy that numbers replies
        // per connection): it is stored under the id qualified by its lane, never dropped.
        let stored: Option<(String, String, String)> = self
            .db
            .lite()?
            .prepare_cached(
                "SELECT thread_key, role, text FROM messages WHERE session_id = ?1 AND message_id = ?2",
            )?
            .query_row(params![m.session_id, m.message_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .optional()?;
        let stored = stored.map(|(lane, role, text)| {
            let same = role == m.role.as_str() && text == m.text;
            (lane, same)
        });
        match stored {
            Some((lane, false)) if lane != key => {
                let qualified = format!("{}@{key}", m.message_id);
                let ingested = self.insert_as(m, &qualified, &key, tally)?;
                Ok(Ingested {
                    thread_key: key,
                    ingested,
                    stored_as: Some(qualified),
                })
            }
            stored => Ok(Ingested {
                thread_key: stored.map_or(key, |(lane, _)| lane),
                ingested: false,
                stored_as: None,
            }),
        }
    }

    /// Writes `m` under `id` in `lane` unless the session holds that id; true when written.
    fn insert_as(
        &self,
        m: &NewMessage<'_>,
        id: &str,
        lane: &str,
        tally: &mut LaneTally,
    ) -> Result<bool, MemoryError> {
        let conn = self.db.lite()?;
        let inserted = conn
            .prepare_cached(
                "INSERT INTO messages (session_id, message_id, thread_key, role, text, ts_ms, reply_to)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (session_id, message_id) DO NOTHING",
            )?
            .execute(params![
                m.session_id,
                id,
                lane,
                m.role.as_str(),
                m.text,
                m.ts_ms,
                m.reply_to
            ])?;
        if inserted == 0 {
            return Ok(false);
        }
        self.writes.set(self.writes.get().wrapping_add(1));
        self.index_message(conn.last_insert_rowid(), m.session_id, lane, m.text)?;
        let t = tally
            .entry((m.session_id.to_string(), lane.to_string()))
            .or_insert((0, 0));
        t.0 += 1;
        t.1 += i64::try_from(m.text.chars().count()).unwrap_or(i64::MAX);
        Ok(true)
    }
}
