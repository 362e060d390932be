'use strict'

// A Slack Web API stand-in on 127.0.0.1 for the thread block's source: it answers
// `conversations.replies` and `users.info` as Slack does (form-encoded POST, JSON
// bodies with `ok`, HTTP 429 with Retry-After when told to refuse) and records the calls.

const http = require('node:http')

/**
 * @param {{ threads: Record<string, object[]>, users: Record<string, string> }} data
 *   `threads` by `<channel>:<root ts>`, `users` display names by user id
 * @returns {Promise<{ url: string, calls: Array<{ method: string, params: Record<string, string>, auth?: string }>, setMode(mode: 'ok' | 'ratelimited' | 'error'): void, close(): Promise<void> }>}
 */
function startSlackApi({ threads, users }) {
  const calls = []
  let mode = 'ok'
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const method = (req.url ?? '').replace(/^\/api\//, '')
      const params = Object.fromEntries(new URLSearchParams(body))
      calls.push({ method, params, auth: req.headers.authorization })
      const send = (status, json, headers = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers })
        res.end(JSON.stringify(json))
      }
      if (mode === 'ratelimited') return send(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' })
      if (mode === 'error') return send(200, { ok: false, error: 'channel_not_found' })
      if (method === 'conversations.replies') {
        const messages = threads[`${params.channel}:${params.ts}`]
        return messages ? send(200, { ok: true, messages, has_more: false }) : send(200, { ok: false, error: 'thread_not_found' })
      }
      if (method === 'users.info') {
        const name = users[params.user]
        return name
          ? send(200, { ok: true, user: { id: params.user, name: params.user.toLowerCase(), profile: { display_name: name } } })
          : send(200, { ok: false, error: 'user_not_found' })
      }
      send(200, { ok: false, error: 'unknown_method' })
    })
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      resolve({
        url: `http://127.0.0.1:${server.address().port}/api`,
        calls,
        setMode: (m) => (mode = m),
        close: () => new Promise((r) => server.close(() => r())),
      })
    })
  })
}

module.exports = { startSlackApi }
