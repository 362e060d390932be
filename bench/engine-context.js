'use strict'

/**
 * The text of what the OpenClaw engine's `assemble` returned: its `systemPromptAddition`,
 * then its messages' text (string contents and text blocks), one after another.
 */
function engineContext(out) {
  const parts = []
  if (typeof out.systemPromptAddition === 'string') parts.push(out.systemPromptAddition)
  for (const m of out.messages ?? []) {
    if (typeof m.content === 'string') parts.push(m.content)
    else if (Array.isArray(m.content)) for (const b of m.content) if (b?.type === 'text') parts.push(b.text)
  }
  return parts.join('\n')
}

module.exports = { engineContext }
