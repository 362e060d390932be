'use strict'

// The context blocks OpenClaw puts before a channel message's text: a label, its
// provenance marker (older versions: "(untrusted metadata)" in its place) and a JSON
// body in a fenced block, e.g.
//   Conversation info: ⟦openclaw:ctx⟧
//   ```json
//   { "message_id": "...", "sender": { "name": "Ann", "username": "ann" } }
//   ```

/** The provenance marker OpenClaw appends to each context header it injects. */
const CONTEXT_MARKER = '\u27e6openclaw:ctx\u27e7'
/** What older OpenClaw versions write in the marker's place. */
const OLD_MARKER = '(untrusted metadata):'

/** Whether `text` may hold a context block (cheap: no parse). */
const mayHoldBlocks = (text) => typeof text === 'string' && (text.includes(CONTEXT_MARKER) || text.includes(OLD_MARKER))

/**
 * The JSON object of the context block `label` (with its colon: "Conversation info:") in
 * `text`, or null when there is none or it is not an object.
 */
function contextBlock(text, label) {
  if (typeof text !== 'string') return null
  const heads = [`${label} ${CONTEXT_MARKER}\n\`\`\`json\n`, `${label.replace(/:$/, '')} ${OLD_MARKER}\n\`\`\`json\n`]
  for (const head of heads) {
    const at = text.indexOf(head)
    if (at < 0) continue
    const start = at + head.length
    const end = text.indexOf('\n```', start)
    if (end < 0) return null
    try {
      const v = JSON.parse(text.slice(start, end))
      return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : null
    } catch {
      return null
    }
  }
  return null
}

/**
 * `text` without OpenClaw's context blocks: each header line ending in the marker (or an
 * older version's "(untrusted metadata):"), with its fenced JSON body, or with the lines
 * after it up to a blank line, and the blank lines after it. What the person wrote is
 * what is left (trimmed); the text itself when it holds no block.
 */
function withoutBlocks(text) {
  if (!mayHoldBlocks(text)) return text
  const lines = text.split('\n')
  const out = []
  let i = 0
  let removed = false
  while (i < lines.length) {
    const line = lines[i].trimEnd()
    if (!(line.endsWith(CONTEXT_MARKER) || line.endsWith(OLD_MARKER))) {
      out.push(lines[i])
      i++
      continue
    }
    removed = true
    i++
    if (lines[i]?.trim() === '```json') {
      i++
      while (i < lines.length && lines[i].trim() !== '```') i++
      i++
    } else {
      while (i < lines.length && lines[i].trim() !== '') i++
    }
    while (i < lines.length && lines[i].trim() === '') i++
  }
  return removed ? out.join('\n').trim() : text
}

module.exports = { CONTEXT_MARKER, OLD_MARKER, mayHoldBlocks, contextBlock, withoutBlocks }
