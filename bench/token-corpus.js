'use strict'

// The texts the token estimator is fitted and checked on, of the kinds a gateway's
// prompts hold, all real text:
//   chat   single messages and runs of 2-31 consecutive ones from the chitchat corpus
//          (bench/chat-corpus.js, PyPI)
//   code   chunks of pinned dependencies' sources: Rust of serde_json and lru (the
//          versions Cargo.lock names, through `cargo metadata`), TypeScript of
//          @anthropic-ai/sdk, JavaScript of @slack/web-api (package-lock.json's)
//   json   the package.json files of the installed dev dependencies, and Slack messages
//          of the bundled channel as JSON (compact and indented)
//   cjk    TypeScript's own Chinese, Japanese and Korean diagnostic messages
//   other  its Czech, German, Spanish, French, Italian, Polish, Portuguese, Russian and
//          Turkish ones
//   emoji  emoji (skin tones and ZWJ sequences included) with and without their English
//          labels, from emojibase-data
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
const KINDS = ['chat', 'code', 'json', 'cjk', 'other', 'emoji']

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

  for (const t of out) t.heldOut = crypto.createHash('sha256').update(`${t.kind}\0${t.id}`).digest()[0] % 5 === 0
  return out
}

module.exports = { tokenCorpus, KINDS }
