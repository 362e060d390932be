// One of the processes of memory-conformance.spec.ts: a store of its own on the PostgreSQL
// at argv[2], answering one JSON request per line on stdin with one line on stdout.
'use strict'
const { createInterface } = require('node:readline')
const { MemoryStore } = require('@openclaw/context-engine')

const S = 'conf-session'
const storeP = MemoryStore.connect({ url: process.argv[2] })

async function answer(req) {
  const m = await storeP
  switch (req.op) {
    case 'turn': {
      await m.commitTurn(req.key, req.turn)
      if (req.compact) await m.compact(S, 'root:42', { force: true, now: req.now })
      const { text } = await m.assemble({ sessionId: S, threadKey: 'root:42', userMessage: req.question, budgetTokens: 1_500, now: req.now })
      return { text }
    }
    case 'race': {
      const plan = await m.planCompaction(S, 'root:42', { force: true, now: 1 })
      try {
        return { ok: true, value: await m.applyCompaction(plan, { now: 2 }) }
      } catch (err) {
        return { ok: false, code: err.code }
      }
    }
    case 'end':
      await m.close()
      return {}
    default:
      throw new Error(`unknown op ${req.op}`)
  }
}

let queue = Promise.resolve()
createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(async () => {
    const out = await answer(JSON.parse(line)).catch((err) => ({ error: err.code ?? err.message }))
    process.stdout.write(`${JSON.stringify(out)}\n`)
  })
})
