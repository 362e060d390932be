#!/usr/bin/env node
// Races stripThreadContext against a plain-JS port of the same parser (same rules:
// marker at a section start before the body, entries ending in their id line, refusal on
// an ambiguous end) and against the prefix-only `startsWith` stripping it replaces (which
// does less: it misses a section behind a media note, so it is shown for scale only).
// Prompts: a media note, a thread section of N entries, a System line, a metadata block
// and the user's text, as the gateway joins them.
//
//   node bench/strip.js [--quick]
'use strict'
const { stripThreadContext } = require('..')

const HISTORY = '[Thread history - for context]'
const STARTER = '[Thread starter - for context]'
const HEADER = /^\[\p{L}[^\]]*\d{4}-\d{2}-\d{2} \d{1,2}:\d{2}[^\]]*\]/u
const ID = /^\[[\p{L}\p{N}_]+ message id: [^\s[\]]+( channel: [^\s[\]]+)?\]$/u
const isBlank = (l) => l.trim() === ''
const isMarker = (l) => l === HISTORY || l === STARTER
const isBody = (l) => l.startsWith('System: ') || l.trimEnd().endsWith('(untrusted metadata):')

/** The same algorithm in plain JS (src/dropin/runtime/strip.rs), for the race. */
function jsStrip(prompt, resumed) {
  if (!resumed) return { text: prompt, stripped: false, reason: 'fresh_session' }
  const lines = []
  let start = 0
  for (;;) {
    const nl = prompt.indexOf('\n', start)
    if (nl < 0) break
    lines.push([start, nl > start && prompt[nl - 1] === '\r' ? nl - 1 : nl])
    start = nl + 1
  }
  if (start < prompt.length) lines.push([start, prompt.length])
  const text = (i) => prompt.slice(lines[i][0], lines[i][1])
  const parse = (m) => {
    let i = m + 1
    if (i >= lines.length || !HEADER.test(text(i))) return { err: 'no_entries' }
    let entries = 0
    for (;;) {
      let j = i + 1
      for (;;) {
        if (j >= lines.length) return { err: 'unterminated_entry' }
        const l = text(j)
        if (ID.test(l)) break
        if (!isBlank(l) && (isMarker(l) || isBody(l) || HEADER.test(l))) return { err: 'unterminated_entry' }
        j++
      }
      entries++
      const k = j + 1
      if (k >= lines.length) return { entries, next: lines.length }
      if (!isBlank(text(k))) return { err: 'missing_separator' }
      let p = k
      while (p < lines.length && isBlank(text(p))) p++
      if (p < lines.length && HEADER.test(text(p))) { i = p; continue }
      return { entries, next: p }
    }
  }
  let fenced = false
  let body = false
  let found = null
  let refused = null
  for (let i = 0; i < lines.length; i++) {
    const l = text(i)
    if (l.trimStart().startsWith('```')) { fenced = !fenced; continue }
    if (fenced || !(i === 0 || isBlank(text(i - 1)))) continue
    if (isMarker(l)) {
      if (body) continue
      const sec = parse(i)
      if (!sec.err) { found = [i, sec]; break }
      refused = refused ?? sec.err
      if (sec.err !== 'no_entries') { refused = sec.err; break }
    } else if (isBody(l)) body = true
  }
  if (!found) return { text: prompt, stripped: false, reason: refused ?? 'no_marker' }
  const [m, sec] = found
  let next = sec.next
  while (next < lines.length && isMarker(text(next))) {
    const more = parse(next)
    if (more.err) break
    next = more.next
  }
  const s = lines[m][0]
  if (next < lines.length) {
    const out = prompt.slice(0, s) + prompt.slice(lines[next][0])
    return { text: out, stripped: true, charsRemoved: prompt.length - out.length }
  }
  let keep = 0
  for (let i = m - 1; i >= 0; i--) if (!isBlank(text(i))) { keep = lines[i][1]; break }
  return { text: prompt.slice(0, keep), stripped: true, charsRemoved: prompt.length - keep }
}

/** What the gateway did before: strip only when the prompt starts with the marker. */
function prefixOnly(prompt) {
  if (!prompt.startsWith(HISTORY) && !prompt.startsWith(STARTER)) return prompt
  const end = prompt.indexOf('\n\n', prompt.lastIndexOf('[slack message id:'))
  return end < 0 ? '' : prompt.slice(end + 2)
}

function prompt(n) {
  const entries = Array.from(
    { length: n },
    (_, i) =>
      `[Slack ${['Bek', 'Ana', 'Jonas', 'Aiko'][i % 4]} (user) Fri 2026-04-10 16:${String(i % 60).padStart(2, '0')} EDT] ` +
      `update ${i}: the canary in eu-west is ${i % 3 ? 'green' : 'red'} again, rolling back the config push\n` +
      `[slack message id: ${1775853000 + i}.000100 channel: C07ROLLOUT]`,
  )
  return [
    '[User sent media without caption]',
    `${HISTORY}\n${entries.join('\n\n')}`,
    'System: [2026-04-10 16:40 EDT] Slack message edited in #rollout.',
    'Conversation info (untrusted metadata):\n```json\n{"channel":"C07ROLLOUT","thread":"1775853000.000100"}\n```',
    'what did we decide about the canary?',
  ].join('\n\n')
}

function time(fn, iters) {
  for (let i = 0; i < Math.min(iters, 500); i++) fn()
  const t = process.hrtime.bigint()
  for (let i = 0; i < iters; i++) fn()
  return Number(process.hrtime.bigint() - t) / iters / 1000
}

const quick = process.argv.includes('--quick')
console.log('stripThreadContext (resumed turn; microseconds per call)')
console.log('entries  chars    addon   same-algo JS   ratio   prefix-only JS (does less)')
for (const n of quick ? [5, 50] : [5, 20, 50, 200, 1000]) {
  const p = prompt(n)
  const a = stripThreadContext(p, { resumed: true })
  const b = jsStrip(p, true)
  if (a.text !== b.text || !a.stripped) throw new Error(`the JS port and the addon disagree at ${n} entries`)
  if (prefixOnly(p) !== p) throw new Error('prefix-only stripping was expected to miss the section behind the media note')
  const iters = quick ? 2000 : Math.max(200, Math.floor(400000 / n))
  const addon = time(() => stripThreadContext(p, { resumed: true }), iters)
  const js = time(() => jsStrip(p, true), iters)
  const old = time(() => prefixOnly(p), iters)
  console.log(
    `${String(n).padStart(7)}  ${String(p.length).padStart(7)}  ${addon.toFixed(2).padStart(7)}  ${js.toFixed(2).padStart(13)}  ${(js / addon).toFixed(2).padStart(5)}x  ${old.toFixed(2).padStart(8)}`,
  )
}
