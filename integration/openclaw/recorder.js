'use strict'

// A model provider on 127.0.0.1 that records every request and answers as the Anthropic
// Messages API does when streaming: the reply names the turn it answers, so a test can
// tell the turns apart in later requests. A test may have it call a tool instead
// (`toolUse(body)` returns `{ name, input }`), as a model does.

const http = require('node:http')

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  for (const [event, data] of events) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
  res.end()
}

/** The last user text of a Messages request. */
function lastUserText(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : []
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (m.role !== 'user') continue
    if (typeof m.content === 'string') return m.content
    const texts = (m.content || []).filter((b) => b.type === 'text').map((b) => b.text)
    if (texts.length) return texts.join('\n')
  }
  return ''
}

function reply(body) {
  const asked = lastUserText(body).replace(/\s+/g, ' ').slice(-120)
  return `Noted. We decided to keep going with that. (re: ${asked})`
}

/** Whether a request's newest message carries tool results (the model's turn goes on). */
function answersTools(body) {
  const messages = Array.isArray(body?.messages) ? body.messages : []
  const last = messages[messages.length - 1]
  return Array.isArray(last?.content) && last.content.some((b) => b.type === 'tool_result')
}

/** The events of a streamed `tool_use` answer. */
function toolUseEvents(id, model, usage, call) {
  return [
    ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage } }],
    ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: `toolu_${id}`, name: call.name, input: {} } }],
    ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.input) } }],
    ['content_block_stop', { type: 'content_block_stop', index: 0 }],
    ['message_delta', { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 12 } }],
    ['message_stop', { type: 'message_stop' }],
  ]
}

/**
 * Starts the recorder; resolves to { url, requests, close }. `toolUse(body)`, when given,
 * may answer a request (not one that carries tool results) with a tool call.
 */
function startRecorder({ toolUse } = {}) {
  const requests = []
  const server = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      let body = null
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch {
        body = null
      }
      requests.push({ method: req.method, url: req.url, headers: req.headers, body })
      if (req.method !== 'POST' || !/\/messages(\?|$)/.test(req.url)) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: req.url } }))
        return
      }
      const text = reply(body)
      const id = `msg_${requests.length}`
      const usage = { input_tokens: 10, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
      const call = toolUse && body && !answersTools(body) ? toolUse(body) : null
      if (call && body.stream !== false) {
        sse(res, toolUseEvents(id, body.model ?? 'echo-1', usage, call))
        return
      }
      if (body && body.stream === false) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id, type: 'message', role: 'assistant', model: body.model, content: [{ type: 'text', text }], stop_reason: 'end_turn', stop_sequence: null, usage }))
        return
      }
      sse(res, [
        ['message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model: body?.model ?? 'echo-1', content: [], stop_reason: null, stop_sequence: null, usage } }],
        ['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }],
        ['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }],
        ['content_block_stop', { type: 'content_block_stop', index: 0 }],
        ['message_delta', { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }],
        ['message_stop', { type: 'message_stop' }],
      ])
    })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      resolve({ url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(r)) })
    })
  })
}

module.exports = { startRecorder }
