// The worker thread of a store opened with MemoryStore.connect (see js/memory/shared.js): it opens
// the store, then makes the calls posted to it one at a time and posts back each answer
// or error (its kind, message, code and path).
'use strict'

const { parentPort, workerData } = require('node:worker_threads')
const { MemoryStore } = require('./index.js')

const failure = (err) => ({
  name: err instanceof Error ? err.name : 'Error',
  message: err instanceof Error ? String(err.message) : String(err),
  code: err?.code,
  path: err?.path,
})

let store
try {
  const { options } = workerData
  if (typeof options.url === 'string') {
    // The native factory gives the native class: the package's (time zones, the packed
    // ingest) is put in its place.
    store = Object.setPrototypeOf(MemoryStore._connectBlocking(options), MemoryStore.prototype)
  } else {
    store = new MemoryStore(options)
  }
  parentPort.postMessage({ ready: true, shared: typeof options.url === 'string' })
} catch (err) {
  parentPort.postMessage({ ready: false, error: failure(err) })
}

const tools = new Map()
let nextTools = 1

function run({ method, args, toolsId }) {
  switch (method) {
    case 'close':
      return store.close()
    case 'tools': {
      const t = store.tools(...args)
      const id = nextTools++
      tools.set(id, t)
      return { toolsId: id, sessionId: t.sessionId, definitions: t.definitions() }
    }
    case 'execute':
      return tools.get(toolsId).execute(...args)
    case 'dropTools':
      return tools.delete(toolsId)
    default:
      return store[method](...args)
  }
}

if (store) {
  parentPort.on('message', (m) => {
    if (m.id === undefined) {
      run(m)
      return
    }
    try {
      parentPort.postMessage({ id: m.id, ok: true, value: run(m) })
    } catch (err) {
      parentPort.postMessage({ id: m.id, ok: false, error: failure(err) })
    }
  })
}
