// MemoryStore.connect: the conversation memory on PostgreSQL, which several gateway hosts
// share. A call to it waits for the network, so it never runs on the caller's event loop:
// the store lives on a worker thread of its own (the same native store, its calls made
// there one at a time), and each method posts its call there and returns a promise of the
// answer. Every promise settles: the store's own waits have timeouts (connecting, each
// statement), and a call the worker has not answered within its deadline rejects with
// PG_TIMEOUT. The worker does not keep the process alive while no call is waiting.
'use strict'

const { Worker } = require('node:worker_threads')
const { join } = require('node:path')
const { inputError, unreadable } = require('../core/errors.js')

const NAME = 'MemoryStore.connect'
// The defaults of the native store's options (src/core/pg.rs), for the deadlines here.
const CONNECT_TIMEOUT_MS = 5_000
const CALL_TIMEOUT_MS = 10_000
// Room past the store's own timeouts for the worker to answer (its start, a busy thread).
const SLACK_MS = 5_000

/** An error the worker sent back, as it was thrown there (kind, message, code, path). */
function revive(e) {
  const Kind = { TypeError, RangeError }[e.name] ?? Error
  const err = new Kind(e.message)
  if (e.code !== undefined) err.code = e.code
  if (e.path !== undefined) err.path = e.path
  return err
}

function coded(code, message) {
  const err = new Error(`${NAME}: ${message}`)
  err.code = code
  return err
}

/** A number option read once (`undefined` when absent), for the deadlines. */
function msOption(options, key, fallback) {
  const v = options[key]
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : fallback
}

class Link {
  #worker
  #pending = new Map()
  #next = 1
  #gone = null
  #callMs

  constructor(worker, callMs) {
    this.#worker = worker
    this.#callMs = callMs
    worker.on('message', (m) => this.#answer(m))
    worker.on('error', (err) => this.#stop(coded('PG_INTERNAL', `the store's worker thread failed: ${err?.message ?? err}`)))
    worker.on('exit', () => this.#stop(coded('ERR_MEMORY_CLOSED', 'the store is closed')))
  }

  /** Posts `method(...args)` to the worker; the promise of its answer. */
  call(name, method, args, extra = {}) {
    if (this.#gone) return Promise.reject(this.#gone)
    const id = this.#next++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#settle(id)
        reject(coded('PG_TIMEOUT', `${name} did not answer within ${this.#callMs} ms`))
      }, this.#callMs)
      this.#pending.set(id, { resolve, reject, timer })
      try {
        this.#worker.postMessage({ id, method, args, ...extra })
      } catch (err) {
        // Arguments a thread cannot be given (a function, a getter that throws).
        this.#settle(id)
        reject(unreadable(name, 'arguments', err))
        return
      }
      this.#worker.ref()
    })
  }

  #settle(id) {
    const p = this.#pending.get(id)
    if (!p) return undefined
    clearTimeout(p.timer)
    this.#pending.delete(id)
    if (this.#pending.size === 0) this.#worker.unref()
    return p
  }

  #answer(m) {
    const p = this.#settle(m.id)
    if (!p) return
    if (m.ok) p.resolve(m.value)
    else p.reject(revive(m.error))
  }

  #stop(err) {
    if (!this.#gone) this.#gone = err
    for (const id of [...this.#pending.keys()]) this.#settle(id).reject(err)
  }

  /** Posts a message that has no answer (nothing, once the worker is gone). */
  notify(message) {
    if (!this.#gone) this.#worker.postMessage(message)
  }

  async close() {
    if (this.#gone) return
    try {
      await this.call('MemoryStore.close', 'close', [])
    } finally {
      this.#gone = coded('ERR_MEMORY_CLOSED', 'the store is closed')
      await this.#worker.terminate()
    }
  }
}

// The worker keeps each tools object until the one here is collected.
const released = new FinalizationRegistry(({ link, id }) => link.notify({ method: 'dropTools', toolsId: id }))

/** Scoped memory tools over a shared store: `execute` returns a promise. */
class SharedMemoryTools {
  #link
  #id
  #definitions

  constructor(link, made) {
    this.#link = link
    this.#id = made.toolsId
    this.#definitions = made.definitions
    this.sessionId = made.sessionId
    released.register(this, { link, id: made.toolsId })
  }

  definitions() {
    return structuredClone(this.#definitions)
  }

  execute(name, input, queryVector) {
    return this.#link.call('MemoryTools.execute', 'execute', [name, input, queryVector], { toolsId: this.#id })
  }
}

/** The memory store on PostgreSQL (or, given `path`, on SQLite) with promise methods. */
class SharedMemoryStore {
  #link

  constructor(link) {
    this.#link = link
  }

  async tools(scope) {
    return new SharedMemoryTools(this.#link, await this.#link.call('MemoryStore.tools', 'tools', [scope]))
  }

  close() {
    return this.#link.close()
  }
}
// Each store's link, for the methods `forward` defines (a private field is not reachable
// from a function made outside the class body).
const links = new WeakMap()

/** Gives SharedMemoryStore each of `methods` (the store's, but `tools` and `close`) as a call on the worker. */
function forward(methods) {
  for (const method of methods) {
    Object.defineProperty(SharedMemoryStore.prototype, method, {
      value: function (...args) {
        const link = links.get(this)
        if (!link) return Promise.reject(new TypeError(`MemoryStore.${method}: not a store from MemoryStore.connect`))
        return link.call(`MemoryStore.${method}`, method, args)
      },
      writable: true,
      configurable: true,
    })
  }
}

/**
 * Opens the store `options` name (`url`: PostgreSQL; `path`: SQLite) on a worker thread:
 * connected, its schema brought up to date, before the promise resolves.
 */
async function connect(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw inputError(TypeError, NAME, 'options', 'expected an object with `url`')
  }
  let copy
  try {
    copy = structuredClone(options)
  } catch (err) {
    throw unreadable(NAME, 'options', err)
  }
  if (copy.url !== undefined && typeof copy.url !== 'string') {
    throw inputError(TypeError, NAME, 'options.url', `expected a postgres:// URL, got ${typeof copy.url}`)
  }
  const connectMs = msOption(copy, 'connectTimeoutMs', CONNECT_TIMEOUT_MS)
  const callMs = msOption(copy, 'callTimeoutMs', CALL_TIMEOUT_MS)
  const worker = new Worker(join(__dirname, '..', '..', 'memory-worker.js'), { workerData: { options: copy } })
  const ready = await new Promise((resolve, reject) => {
    // Connecting, then the schema's migration (a call).
    const timer = setTimeout(() => {
      reject(coded('PG_TIMEOUT', `connecting took longer than ${connectMs + callMs} ms`))
      worker.terminate()
    }, connectMs + callMs + SLACK_MS)
    worker.once('message', (m) => {
      clearTimeout(timer)
      if (m.ready) resolve(m)
      else {
        reject(revive(m.error))
        worker.terminate()
      }
    })
    worker.once('error', (err) => {
      clearTimeout(timer)
      reject(coded('PG_INTERNAL', `the store's worker thread failed: ${err?.message ?? err}`))
    })
  })
  worker.unref()
  // A call is several statements, each within the call timeout, and may wait for a
  // connection: its deadline here is that much and the slack.
  const link = new Link(worker, connectMs + 2 * callMs + SLACK_MS)
  const store = new SharedMemoryStore(link)
  links.set(store, link)
  Object.defineProperty(store, 'shared', { value: ready.shared, enumerable: true })
  return store
}

module.exports = { connect, forward }
