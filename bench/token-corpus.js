'use strict'

// The texts the token estimator is fitted and checked on, of the kinds a gateway's
// prompts hold, all real text:
//   chat   single messages and runs of 2-31 consecutive ones from the chitchat corpus
//          (bench/chat-corpus.js, PyPI)
//   code   chunks of pinned dependencies' sources: Rust of serde_json and lru (the
//          versions Cargo.lock names, through `cargo metadata`), TypeScript of
//          @anthropic-ai/sdk, JavaScript of @slack/web-api (package-lock.json's)
//   json   the package.json files of the installed dev dependencies, Slack messages
//          of the bundled channel as JSON (compact and indented), and runs of 2-9 chat
//          messages as one JSON string of several lines
//   cjk    TypeScript's own Chinese, Japanese and Korean diagnostic messages
//   other  its Czech, German, Spanish, French, Italian, Polish, Portuguese, Russian and
//          Turkish ones
//   emoji  emoji (skin tones and ZWJ sequences included) with and without their English
//          labels, from emojibase-data
//   layout text laid out in columns, as people paste terminal and report output into
//          chat: the installed dev dependencies' package.json fields (name, version,
//          license, description), the bundled Slack channel's messages (author, ts,
//          text) and the words of chat messages five to a row (a spreadsheet's short
//          cells) as space-padded columns (left- and right-aligned, gaps of 1-8 spaces),
//          tab-separated values, tables drawn with box-drawing characters (single and
//          double lines) or ASCII `+-|`, Markdown pipe tables, columns aligned on tab
//          stops, and `tree`-style lists; a quarter of them as JSON strings
// Deterministic: every input is pinned by a lock file, each kind draws from its own
// xorshift sequence (bench/rng.js), and every fifth text (by a hash of its kind and id)
// is held out of the fit.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { loadChat } = require('./chat-corpus')
const { xorshift } = require('./rng')

const ROOT = path.join(__dirname, '..')
const KINDS = ['chat', 'code', 'json', 'cjk', 'other', 'emoji', 'layout']

function* files(dir, pattern) {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name)
    if (e.isDirectory()) {
      if (!['node_modules', 'target', '.cache', '.git'].includes(e.name)) yield* files(p, pattern)
    } else if (pattern.test(e.name)) yield p
  }
}

/** Source folders of the Rust crates `names`, as Cargo.lock pins them. */
function crateSources(names) {
  const meta = JSON.parse(execFileSync('cargo', ['metadata', '--format-version', '1'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 }))
  return meta.packages.filter((p) => names.includes(p.name)).map((p) => path.join(path.dirname(p.manifest_path), 'src'))
}

/** @returns {Promise<Array<{ kind: string, id: string, text: string, source: string, heldOut: boolean }>>} */
async function tokenCorpus() {
  let random
  let pick
  const seed = (kind) => {
    random = xorshift(0x9e3779b9 ^ (KINDS.indexOf(kind) + 1) * 2654435761)
    pick = (n) => Math.floor(random() * n)
  }
  const out = []
  // `source`: what a text is (a language, a file type), for sums that keep to one.
  const add = (kind, id, text, source = kind) => {
    if (text.trim() !== '') out.push({ kind, id, text, source })
  }

  seed('chat')
  const chat = await loadChat()
  for (let i = 0; i < 3000; i++) {
    const j = pick(chat.length)
    add('chat', `m${j}`, chat[j].text)
  }
  for (let i = 0; i < 600; i++) {
    const j = pick(chat.length - 40)
    const n = 2 + pick(30)
    add('chat', `t${j}:${n}`, chat.slice(j, j + n).map((m) => m.text).join('\n'))
  }

  seed('code')
  const modules = path.join(ROOT, 'node_modules')
  const sources = [
    ...crateSources(['serde_json', 'lru']).flatMap((dir) => [...files(dir, /\.rs$/)]),
    ...files(path.join(modules, '@anthropic-ai', 'sdk', 'src', 'resources'), /\.ts$/),
    ...files(path.join(modules, '@slack', 'web-api', 'dist'), /\.js$/),
  ]
  for (const f of sources.sort()) {
    const lines = fs.readFileSync(f, 'utf8').split('\n')
    for (let i = 0; i < lines.length; ) {
      const n = 5 + pick(60)
      // Every third chunk: enough code without outweighing the other kinds.
      if (pick(3) === 0) add('code', `${path.relative(ROOT, f)}:${i}`, lines.slice(i, i + n).join('\n'), path.extname(f).slice(1))
      i += n
    }
  }

  const tsLib = path.join(ROOT, 'node_modules', 'typescript', 'lib')
  const languages = [
    ['cjk', ['zh-cn', 'zh-tw', 'ja', 'ko']],
    ['other', ['cs', 'de', 'es', 'fr', 'it', 'pl', 'pt-br', 'ru', 'tr']],
  ]
  for (const [kind, langs] of languages) {
    seed(kind)
    for (const lang of langs) {
      const texts = Object.values(JSON.parse(fs.readFileSync(path.join(tsLib, lang, 'diagnosticMessages.generated.json'), 'utf8')))
      for (let i = 0; i < texts.length; ) {
        const n = 1 + pick(12)
        add(kind, `${lang}:${i}`, texts.slice(i, i + n).join('\n'), lang)
        i += n
      }
    }
  }

  seed('json')
  for (const d of fs.readdirSync(modules).sort()) {
    if (d.startsWith('.')) continue
    const names = d.startsWith('@') ? fs.readdirSync(path.join(modules, d)).sort().map((x) => `${d}/${x}`) : [d]
    for (const name of names) {
      const f = path.join(modules, name, 'package.json')
      if (fs.existsSync(f)) add('json', name, fs.readFileSync(f, 'utf8'), 'package.json')
    }
  }
  const channel = JSON.parse(fs.readFileSync(path.join(ROOT, 'fixtures', 'slack-channel.json'), 'utf8'))
  const messages = channel.messages ?? channel
  for (let i = 0; i < 400; i++) {
    const j = pick(messages.length)
    const n = 1 + pick(20)
    add('json', `slack${j}:${n}`, JSON.stringify(messages.slice(j, j + n), null, random() < 0.5 ? 0 : 2), 'slack')
  }

  // Messages of several short lines as JSON strings (each line break an escape).
  for (let i = 0; i < 300; i++) {
    const j = pick(chat.length - 10)
    const n = 2 + pick(8)
    const text = chat.slice(j, j + n).map((m) => m.text).join('\n')
    add('json', `lines${j}:${n}`, JSON.stringify({ user: `U${j}`, text }), 'lines')
  }

  seed('emoji')
  const emoji = require('emojibase-data/en/data.json')
  for (let i = 0; i < 1500; i++) {
    const n = 1 + pick(8)
    const parts = []
    for (let k = 0; k < n; k++) {
      const e = emoji[pick(emoji.length)]
      const shown = e.skins && random() < 0.3 ? e.skins[pick(e.skins.length)] : e
      parts.push(random() < 0.5 ? `${shown.emoji} ${shown.label}` : shown.emoji)
    }
    add('emoji', `e${i}`, parts.join(random() < 0.5 ? ' ' : '\n'))
  }

  seed('layout')
  const packages = []
  for (const d of fs.readdirSync(modules).sort()) {
    if (d.startsWith('.')) continue
    const names = d.startsWith('@') ? fs.readdirSync(path.join(modules, d)).sort().map((x) => `${d}/${x}`) : [d]
    for (const name of names) {
      const f = path.join(modules, name, 'package.json')
      if (!fs.existsSync(f)) continue
      const p = JSON.parse(fs.readFileSync(f, 'utf8'))
      packages.push([String(p.name ?? name), String(p.version ?? ''), String(typeof p.license === 'string' ? p.license : ''), String(p.description ?? '').slice(0, 60)])
    }
  }
  const slackRows = messages.map((m) => [String(m.user ?? m.bot_id ?? ''), String(m.ts), String(m.text ?? '').replace(/\s+/g, ' ').slice(0, 50)])
  // Short cells, as a spreadsheet's: the words of chat messages, five to a row.
  const wordRows = chat
    .map((m) => m.text.split(/\s+/).filter((w) => w !== ''))
    .filter((w) => w.length >= 5)
    .map((w) => w.slice(0, 5))
  for (let i = 0; i < 1200; i++) {
    const which = pick(3)
    const pool = [slackRows, packages, wordRows][which]
    const head = [['user', 'ts', 'text'], ['package', 'version', 'license', 'description'], ['a', 'b', 'c', 'd', 'e']][which]
    const n = 2 + pick(20)
    const at = pick(Math.max(1, pool.length - n))
    let rows = pool.slice(at, at + n)
    const cols = 2 + pick(head.length - 1)
    rows = [head, ...rows].map((r) => r.slice(0, cols))
    const widths = head.slice(0, cols).map((_, c) => Math.max(...rows.map((r) => r[c].length)))
    const form = pick(7)
    const gap = 1 + pick(8)
    let text
    if (form === 0) {
      // Space-padded columns, numbers right-aligned half the time.
      const right = random() < 0.5
      text = rows.map((r) => r.map((v, c) => (right && /^[\d.]+$/.test(v) ? v.padStart(widths[c]) : v.padEnd(widths[c]))).join(' '.repeat(gap)).trimEnd()).join('\n')
    } else if (form === 1) {
      text = rows.map((r) => r.join('\t')).join('\n')
    } else if (form === 2 || form === 3) {
      const [h, v, tl, tm, tr, ml, mm, mr, bl, bm, br] = form === 2 ? '─│┌┬┐├┼┤└┴┘' : '═║╔╦╗╠╬╣╚╩╝'
      const line = (l, m, r) => l + widths.map((w) => h.repeat(w + 2)).join(m) + r
      const row = (r) => v + r.map((x, c) => ` ${x.padEnd(widths[c])} `).join(v) + v
      text = [line(tl, tm, tr), row(rows[0]), line(ml, mm, mr), ...rows.slice(1).map(row), line(bl, bm, br)].join('\n')
    } else if (form === 4) {
      const ascii = random() < 0.5
      const row = (r) => '| ' + r.map((x, c) => x.padEnd(widths[c])).join(' | ') + ' |'
      const rule = ascii ? '+' + widths.map((w) => '-'.repeat(w + 2)).join('+') + '+' : '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|'
      text = (ascii ? [rule, row(rows[0]), rule, ...rows.slice(1).map(row), rule] : [row(rows[0]), rule, ...rows.slice(1).map(row)]).join('\n')
    } else if (form === 6) {
      // Columns aligned on 8-wide tab stops, as `expand`-less terminal output and
      // tab-indented code are: as many tabs after a cell as reach the next column.
      const stops = widths.map((w) => Math.floor(w / 8) + 1)
      text = rows.map((r) => r.map((v, c) => (c === r.length - 1 ? v : v + '\t'.repeat(Math.max(1, stops[c] - Math.floor(v.length / 8))))).join('')).join('\n')
    } else {
      // A `tree`-style list: the rows' first column under the second's values.
      text = rows.slice(1).map((r, k, all) => `${k === all.length - 1 ? '└── ' : '├── '}${r[0]}${' '.repeat(gap)}${r[1]}`).join('\n')
    }
    const shape = ['columns', 'tsv', 'box', 'box', 'pipes', 'tree', 'tabstops'][form]
    // A quarter as a JSON string: how the engine's JSON documents carry pasted text.
    if (random() < 0.25) add('layout', `l${i}`, JSON.stringify({ text }), `${shape}-json`)
    else add('layout', `l${i}`, text, shape)
  }

  for (const t of out) t.heldOut = crypto.createHash('sha256').update(`${t.kind}\0${t.id}`).digest()[0] % 5 === 0
  return out
}

module.exports = { tokenCorpus, KINDS }
