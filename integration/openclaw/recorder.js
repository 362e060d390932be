'use strict'

// A model provider on 127.0.0.1 that records every request and answers as the Anthropic
// Messages API does when streaming: the reply names the turn it answers, so a test can
// tell the turns apart in later requests. A test may have it call a tool instead
// (`toolUse(body)` returns `{ name, input }`), as a model does. Given a context window, it
// counts each request's input tokens and refuses, with the API's 400 errors, a request
// whose input, or input plus `max_tokens`, exceeds the window.

const http = require('node:http')
const { referenceTokens } = require('../../bench/reference-tokens.js')

/** What a message's framing costs beside its content (role, block boundaries), in tokens. */
const MESSAGE_OVERHEAD = 4

/** The text of a content block list or string, as the model reads it. */
function contentText(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content
    .map((b) => {
      if (!b || typeof b !== 'object') return ''
      if (b.type === 'text') return b.text ?? ''
      if (b.type === 'thinking') return b.thinking ?? ''
      if (b.type === 'tool_use') return `${b.name ?? ''} ${JSON.stringify(b.input ?? {})}`
      if (b.type === 'tool_result') return contentText(b.content)
      // An image costs about (width x height) / 750 tokens; the tests send none.
      if (b.type === 'image') return ''
      return JSON.stringify(b)
    })
    .join('\n')
}

/**
 * A request's input tokens by the reference tokenizer (`@anthropic-ai/tokenizer`): the
 * system prompt, each message's content and framing, and the tools' definitions.
 */
function inputTokens(body) {
  const system = typeof body.system === 'string' ? body.system : contentText(body.system)
  let n = referenceTokens(system)
  for (const m of Array.isArray(body.messages) ? body.messages : []) n += referenceTokens(contentText(m.content)) + MESSAGE_OVERHEAD
  if (Array.isArray(body.tools) && body.tools.length > 0) n += referenceTokens(JSON.stringify(body.tools))
  return n
}

/**
 * The API's refusal of a request over the window, or null: input over it, and, with
 * `withReply`, input plus `max_tokens` over it (what current models refuse).
 */
function overWindow(input, maxTokens, window, withReply) {
  if (input > window) return `prompt is too long: ${input} tokens > ${window} maximum`
  if (withReply && input + maxTokens > window) {
    return `input length and \`max_tokens\` exceed context limit: ${input} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`
  }
  return null
}

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
 * may answer a request (not one that carries tool results) with a tool call. With
 * `contextWindow`, each Messages request is counted (`inputTokens`, `maxTokens` on its
 * record) and one over the window is answered with the API's 400 (`refused` on its
 * record): its input alone over it, or (`refuseWithReply`) its input plus `max_tokens`.
 * `reply(body)`, when given, writes the answer's text.
 */
function startRecorder({ toolUse, contextWindow, refuseWithReply = false, reply: replyText = reply } = {}) {
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
      const record = { method: req.method, url: req.url, headers: req.headers, body }
      requests.push(record)
      if (req.method !== 'POST' || !/\/messages(\?|$)/.test(req.url)) {
        res.writeHead(404, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: req.url } }))
        return
      }
      let input = 10
      if (contextWindow !== undefined && body && Array.isArray(body.messages)) {
        input = inputTokens(body)
        record.inputTokens = input
        record.maxTokens = Number(body.max_tokens) || 0
        const refusal = overWindow(input, record.maxTokens, contextWindow, refuseWithReply)
        if (refusal !== null) {
          record.refused = refusal
          res.writeHead(400, { 'content-type': 'application/json', 'request-id': `req_${requests.length}` })
          res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: refusal } }))
          return
        }
      }
      const text = replyText(body)
      const id = `msg_${requests.length}`
      const usage = { input_tokens: input, output_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
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

module.exports = { startRecorder, lastUserText }
