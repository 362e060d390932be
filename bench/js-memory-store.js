'use strict'
// The conversation memory's ingest and assembly written in plain JavaScript over
// `node:sqlite` (Node >= 22.5), the same design as the addon's, so bench/memory.js compares
// two implementations of one algorithm: the same schema, pragmas and thread keys; every
// message in an FTS5 index scoped by opaque session and lane tokens (the same tokenizer),
// lane statistics kept at ingest; an assembly that gives the summary 20% of what the fixed
// parts leave, the memories 10% and the lane's newest messages 30%, and fills the rest with
// the lane's older messages that match the question (BM25 on the lane's statistics, one
// query per term, each match with up to two turns on each side) and the session's other
// lanes' messages that hold every term. Not the package's code; a baseline only. What it
// leaves out: the recency and speaker signals, reply parents, named lanes, day headings in
// the user's time zone (UTC here), and the addon's script-aware token estimate (length / 4
// here, cheaper).

const crypto = require('node:crypto')
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
CREATE VIRTUAL TABLE IF NOT EXISTS messages_index USING fts5 (
  scope, body, content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2');
CREATE TABLE IF NOT EXISTS lane_stats (
  session_id TEXT NOT NULL, thread_key TEXT NOT NULL, messages INTEGER NOT NULL, chars INTEGER NOT NULL,
  PRIMARY KEY (session_id, thread_key)) WITHOUT ROWID;
`

const STOP_WORDS = new Set(
  ('a about after again all also am an and any are as at be because been before being but by can could did do does doing for from get got had has have he her here hers him his how i if in into is it its just let me more most my no not now of on or other our out over re s she should so some such t than that the their them then there these they this those to too up us very was we were what whats when where which while who whom why will with would you your yours ve ll d m don didn doesn isn wasn ok okay yes yeah').split(' '),
)
const SUMMARY_SHARE = 0.2
const MEMORIES_SHARE = 0.1
const RECENT_SHARE = 0.3
const HIT_LIMIT = 200
const STRONG_LIMIT = 20
const NEIGHBOURS = 2
const BM25_K1 = 1.2
const BM25_B = 0.75

const escape = (t) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const tokens = (t) => Math.ceil(t.length / 4)
const hex64 = (...parts) => crypto.createHash('sha256').update(parts.map((p) => `${p}\0`).join('')).digest('hex').slice(0, 16)
const sessionToken = (s) => `s${hex64(s)}`
const laneToken = (s, l) => `l${hex64(s, l)}`
const quote = (t) => `"${t.replace(/"/g, '""')}"`
const idf = (n, df) => Math.log(1 + (n - df + 0.5) / (df + 0.5))

/** A question's search terms: its words that are not stop words (all of them when each is one). */
function queryTerms(text) {
  const words = [...new Set(text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((w) => w !== ''))]
  const kept = words.filter((w) => !STOP_WORDS.has(w))
  return kept.length > 0 ? kept : words
}

/** `HH:MM who: text`, under a `## YYYY-MM-DD` heading per day. */
function render(messages) {
  let out = ''
  let day = null
  for (const m of messages) {
    const iso = new Date(m.ts_ms).toISOString()
    if (iso.slice(0, 10) !== day) {
      day = iso.slice(0, 10)
      out += `## ${day}\n`
    }
    out += `${iso.slice(11, 16)} ${m.role}: ${escape(m.text)}\n`
  }
  return out
}

class JsMemoryStore {
  constructor(path) {
    this.db = new DatabaseSync(path)
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA cache_size = -65536; PRAGMA wal_autocheckpoint = 16384')
    this.db.exec(SCHEMA)
    this.db.exec("INSERT INTO messages_index (messages_index, rank) VALUES ('automerge', 2)")
    this.laneOf = this.db.prepare('SELECT thread_key FROM messages WHERE session_id = ? AND message_id = ?')
    this.insert = this.db.prepare(
      'INSERT INTO messages (session_id, message_id, thread_key, role, text, ts_ms, reply_to) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, message_id) DO NOTHING RETURNING seq',
    )
    this.index = this.db.prepare('INSERT INTO messages_index (rowid, scope, body) VALUES (?, ?, ?)')
    this.stats = this.db.prepare(
      'INSERT INTO lane_stats (session_id, thread_key, messages, chars) VALUES (?, ?, 1, ?) ON CONFLICT (session_id, thread_key) DO UPDATE SET messages = messages + 1, chars = chars + excluded.chars',
    )
    this.laneStats = this.db.prepare('SELECT messages, chars FROM lane_stats WHERE session_id = ? AND thread_key = ?')
    this.newest = this.db.prepare('SELECT seq, role, text, ts_ms FROM messages WHERE session_id = ? AND thread_key = ? AND seq < ? ORDER BY seq DESC LIMIT 32')
    this.matching = this.db.prepare('SELECT rowid FROM messages_index WHERE messages_index MATCH ?')
    this.rows = this.db.prepare('SELECT m.seq, m.session_id, m.thread_key, m.role, m.text, m.ts_ms FROM json_each(?) j JOIN messages m ON m.seq = j.value')
    this.before = this.db.prepare('SELECT seq, role, text, ts_ms FROM messages WHERE session_id = ? AND thread_key = ? AND seq < ? ORDER BY seq DESC LIMIT 2')
    this.after = this.db.prepare('SELECT seq, role, text, ts_ms FROM messages WHERE session_id = ? AND thread_key = ? AND seq > ? ORDER BY seq ASC LIMIT 2')
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
        const row = this.insert.get(m.sessionId, m.messageId, key, m.role, m.text, m.ts, m.replyTo ?? null)
        if (row === undefined) return { threadKey: key, ingested: false }
        this.index.run(row.seq, `${sessionToken(m.sessionId)} ${laneToken(m.sessionId, key)}`, m.text)
        this.stats.run(m.sessionId, key, m.text.length)
        return { threadKey: key, ingested: true }
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

  /** The lane's messages before `below` holding any of `terms`, best first by BM25 on the lane's statistics. */
  laneHits(sessionId, lane, terms, below) {
    const stats = this.laneStats.get(sessionId, lane)
    if (!stats) return []
    const scope = laneToken(sessionId, lane)
    const sums = new Map()
    for (const t of terms) {
      const rows = this.matching.all(`scope : "${scope}" AND body : (${quote(t)})`)
      if (rows.length === 0) continue
      const w = idf(Math.max(stats.messages, rows.length), rows.length)
      for (const { rowid } of rows) if (rowid < below) sums.set(rowid, (sums.get(rowid) ?? 0) + w)
    }
    if (sums.size === 0) return []
    const best = [...sums].sort((a, b) => b[1] - a[1] || b[0] - a[0]).slice(0, HIT_LIMIT)
    const mean = stats.chars / stats.messages
    const rows = new Map(this.rows.all(JSON.stringify(best.map(([seq]) => seq))).map((r) => [r.seq, r]))
    return best
      .map(([seq, sum]) => {
        const r = rows.get(seq)
        const norm = 1 - BM25_B + (BM25_B * r.text.length) / Math.max(mean, 1)
        return { row: r, score: (sum * (BM25_K1 + 1)) / (1 + BM25_K1 * norm) }
      })
      .sort((a, b) => b.score - a.score || b.row.seq - a.row.seq)
  }

  /** Messages of the session's other lanes holding every term (two or more), newest first. */
  strongElsewhere(sessionId, lane, terms) {
    if (terms.length < 2) return []
    const expression = `(scope : "${sessionToken(sessionId)}" AND body : (${terms.map(quote).join(' AND ')})) NOT scope : "${laneToken(sessionId, lane)}"`
    const seqs = this.matching
      .all(expression)
      .map((r) => r.rowid)
      .reverse()
      .slice(0, STRONG_LIMIT)
    if (seqs.length === 0) return []
    return this.rows.all(JSON.stringify(seqs)).filter((r) => r.session_id === sessionId && r.thread_key !== lane)
  }

  assemble({ sessionId, threadKey, policy, userMessage, budgetTokens, memories = 5 }) {
    const fixed = `<policy>\n${escape(policy)}\n</policy>\n<user_message>\n${escape(userMessage)}\n</user_message>\n`
    const rest = Math.max(0, budgetTokens - tokens(fixed))
    let used = 0
    // The summary, cut to its share (its last lines go first).
    let summary = this.summary.get(sessionId, threadKey)?.body ?? null
    if (summary !== null) {
      while (summary !== '' && tokens(summary) + 8 > rest * SUMMARY_SHARE) summary = summary.slice(0, summary.lastIndexOf('\n', summary.length - 2) + 1)
      used += summary === '' ? 0 : tokens(summary) + 8
    }
    // Memories, to their share.
    const terms = queryTerms(userMessage)
    const mem = []
    if (terms.length > 0) {
      let room = rest * MEMORIES_SHARE
      for (const r of this.search.all(terms.map(quote).join(' OR '), sessionId, memories)) {
        const line = `- ${escape(r.body)}\n`
        if (tokens(line) > room) break
        room -= tokens(line)
        used += tokens(line)
        mem.push(line)
      }
    }
    // The lane's newest messages, to their share.
    const recent = []
    let below = Number.MAX_SAFE_INTEGER
    let room = rest * RECENT_SHARE
    const takeRecent = () => {
      for (;;) {
        const page = this.newest.all(sessionId, threadKey, below)
        if (page.length === 0) return
        for (const m of page) {
          const c = tokens(`00:00 ${m.role}: ${m.text}\n`)
          if (c > room) return
          room -= c
          used += c
          recent.push(m)
          below = m.seq
        }
      }
    }
    takeRecent()
    // Retrieved: older matches of the lane and strong matches elsewhere, each with its turns.
    const shown = new Set(recent.map((m) => m.seq))
    const retrieved = []
    room = rest - used
    const take = (m) => {
      if (shown.has(m.seq)) return true
      const c = tokens(`00:00 ${m.role}: ${m.text}\n`)
      if (c > room) return false
      room -= c
      used += c
      shown.add(m.seq)
      retrieved.push(m)
      return true
    }
    if (terms.length > 0) {
      const hits = [...this.strongElsewhere(sessionId, threadKey, terms).map((row) => ({ row, lane: row.thread_key })), ...this.laneHits(sessionId, threadKey, terms, below).map((h) => ({ row: h.row, lane: threadKey }))]
      for (const h of hits) {
        if (!take(h.row)) break
        const [b, a] = [this.before.all(sessionId, h.lane, h.row.seq), this.after.all(sessionId, h.lane, h.row.seq)]
        for (let i = 0; i < NEIGHBOURS; i++) {
          if (b[i]) take(b[i])
          if (a[i]) take(a[i])
        }
      }
    }
    // What is left goes to older recent messages.
    room = rest - used
    takeRecent()
    recent.reverse()
    retrieved.sort((x, y) => x.seq - y.seq)
    const build = () => {
      const parts = [`<policy>\n${escape(policy)}\n</policy>\n`]
      if (summary) parts.push(`<thread_summary>\n${escape(summary)}</thread_summary>\n`)
      if (mem.length) parts.push(`<memories>\n${mem.join('')}</memories>\n`)
      if (retrieved.length) parts.push(`<retrieved_messages>\n${render(retrieved)}</retrieved_messages>\n`)
      if (recent.length) parts.push(`<recent_messages>\n${render(recent)}</recent_messages>\n`)
      parts.push(`<user_message>\n${escape(userMessage)}\n</user_message>\n`)
      return parts.join('')
    }
    // The tags and day headings were not counted: the oldest messages give way for them.
    let text = build()
    while (tokens(text) > budgetTokens && (recent.length > 0 || retrieved.length > 0)) {
      if (recent.length > 0) recent.shift()
      else retrieved.shift()
      text = build()
    }
    return { text, tokens: tokens(text) }
  }

  close() {
    this.db.close()
  }
}

module.exports = { JsMemoryStore }
