// Ingests batches into a MemoryStore file until killed, printing the last message id of
// each batch once `ingest` has returned (acknowledged). Used by memory-faults.spec.ts.
'use strict'
const { MemoryStore } = require('@openclaw/context-engine')
const [file] = process.argv.slice(2)
const memory = new MemoryStore({ path: file })
let id = 0
for (;;) {
  const batch = []
  for (let i = 0; i < 200; i++) {
    id++
    batch.push({ sessionId: `s${id % 7}`, chatId: 'c', messageId: String(id), role: 'user', text: `message ${id} ${'x'.repeat(100)}`, ts: id })
  }
  memory.ingest(batch)
  process.stdout.write(`${id}\n`)
}
