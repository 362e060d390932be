'use strict'
// The conversation memory's ingest and assembly written the way a JavaScript engine does it
// today, over `node:sqlite` (Node >= 22.5): the same schema, pragmas, thread keys and
// queries as the addon, so bench/memory.js compares the two implementations of one design.
// Not the package's code; a baseline only.

const { DatabaseSync } = require('node:sqlite')

const SCHEMA = `
CREATE TABLE IF NOT EXISTS messages (
  seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL, message_id TEXT NOT NULL,
  thread_key TEXT NOT NULL, role TEXT NOT NULL, text TEXT NOT NULL, ts_ms INTEGER NOT NULL,
  reply_to TEXT, UNIQUE (session_id, message_id));
CREATE INDEX IF NOT EXISTS messages_by_lane ON messages (session_id, thread_key, seq);
CREATE TABLE IF NOT EXISTS records (
  id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, kind TEXT NOT NULL, thread_key TEXT NOT NULL,
  body TEXT NOT NULL, summary_version INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS records_words USING fts5(body, content='records', content_rowid='id');
CREATE TRIGGER IF NOT EXISTS records_ai AFTER INSERT ON records BEGIN
  INSERT INTO records_words (rowid, body) VALUES (new.id, new.body); END;
`

const escape = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const tokens = (t) => Math.ceil(t.length / 4)

class JsMemoryStore {
  constructor(path) {
    this.db = new DatabaseSync(path)
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 16384')
    this.db.exec(SCHEMA)
    this.laneOf = this.db.prepare('SELECT thread_key FROM messages WHERE session_id = ? AND message_id = ?')
    this.insert = this.db.prepare(
      'INSERT INTO messages (session_id, message_id, thread_key, role, text, ts_ms, reply_to) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, message_id) DO NOTHING',
    )
    this.recent = this.db.prepare('SELECT role, text FROM messages WHERE session_id = ? AND thread_key = ? ORDER BY seq DESC LIMIT ?')
    this.summary = this.db.prepare("SELECT body FROM records WHERE session_id = ? AND kind = 'thread_summary' AND thread_key = ?")
    this.search = this.db.prepare(
      "SELECT r.body FROM records_words JOIN records r ON r.id = records_words.rowid WHERE records_words MATCH ? AND r.session_id = ? AND r.kind IN ('fact', 'preference', 'outcome') ORDER BY bm25(records_words) LIMIT ?",
    )
    this.put = this.db.prepare('INSERT INTO records (session_id, kind, thread_key, body, summary_version, updated_at_ms) VALUES (?, ?, ?, ?, 1, 0)')
  }

  threadKey(m) {
    if (m.topicId) return `topic:${m.chatId}:${m.topicId}`
    if (m.replyTo) {
      const parent = this.laneOf.get(m.sessionId, m.replyTo)
      if (parent && (parent.thread_key.startsWith('reply:') || parent.thread_key.startsWith('topic:'))) return parent.thread_key
      return `reply:${m.chatId}:${m.replyTo}`
    }
    return `root:${m.chatId}`
  }

  ingest(batch) {
    this.db.exec('BEGIN')
    try {
      const out = batch.map((m) => {
        const key = this.threadKey(m)
        const r = this.insert.run(m.sessionId, m.messageId, key, m.role, m.text, m.ts, m.replyTo ?? null)
        return { threadKey: key, ingested: r.changes === 1 }
      })
      this.db.exec('COMMIT')
      return out
    } catch (err) {
      this.db.exec('ROLLBACK')
      throw err
    }
  }

  putFact(sessionId, body) {
    this.put.run(sessionId, 'fact', '', body)
  }

  assemble({ sessionId, threadKey, policy, userMessage, budgetTokens, recent = 10, memories = 5 }) {
    const words = [...new Set(userMessage.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w.length >= 2))]
    const found = words.length ? this.search.all(words.map((w) => `"${w}"`).join(' OR '), sessionId, memories) : []
    const summary = this.summary.get(sessionId, threadKey)
    const lines = this.recent.all(sessionId, threadKey, recent).reverse()
    const parts = [`<policy>\n${escape(policy)}\n</policy>\n`]
    if (summary) parts.push(`<thread_summary>\n${escape(summary.body)}\n</thread_summary>\n`)
    const mem = found.map((r) => `- ${escape(r.body)}\n`)
    const rec = lines.map((m) => `[${m.role}] ${escape(m.text)}\n`)
    const user = `<user_message>\n${escape(userMessage)}\n</user_message>\n`
    // Give way: memories first, then the oldest recent messages.
    const total = () => tokens(parts.join('')) + tokens(mem.join('')) + tokens(rec.join('')) + tokens(user)
    while (total() > budgetTokens && mem.length) mem.pop()
    while (total() > budgetTokens && rec.length) rec.shift()
    if (mem.length) parts.push(`<memories>\n${mem.join('')}</memories>\n`)
    if (rec.length) parts.push(`<recent_messages>\n${rec.join('')}</recent_messages>\n`)
    parts.push(user)
    const text = parts.join('')
    return { text, tokens: tokens(text) }
  }

  close() {
    this.db.close()
  }
}

module.exports = { JsMemoryStore }
