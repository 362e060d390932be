import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, openSync, readSync, rmSync, statSync, writeSync, closeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { MemoryStore } from '@openclaw/context-engine'
import { thrown } from './helpers'

const dir = mkdtempSync(join(tmpdir(), 'memory-faults-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const child = join(__dirname, 'scripts', 'memory-ingest-child.cjs')

function countAll(file: string): number {
  const m = new MemoryStore({ path: file })
  try {
    let n = 0
    for (let s = 0; s < 7; s++) n += m.recent(`s${s}`, 'root:c', 1_000_000).length
    return n
  } finally {
    m.close()
  }
}

describe('MemoryStore under faults', () => {
  it('loses nothing acknowledged when its process is killed with SIGKILL mid-ingest, and the file opens', async () => {
    const file = join(dir, 'killed.sqlite')
    const proc = spawn(process.execPath, [child, file], { stdio: ['ignore', 'pipe', 'inherit'] })
    let acked = 0
    let buffered = ''
    await new Promise<void>((resolve) => {
      proc.stdout.on('data', (d: Buffer) => {
        buffered += d.toString()
        const lines = buffered.split('\n')
        buffered = lines.pop() ?? ''
        for (const l of lines) acked = Math.max(acked, Number(l))
        // Kill it while it is writing, well into the run.
        if (acked >= 20_000 && !proc.killed) {
          proc.kill('SIGKILL')
          resolve()
        }
      })
    })
    await new Promise((r) => proc.once('exit', r))
    expect(proc.signalCode).toBe('SIGKILL')
    const stored = countAll(file)
    expect(stored).toBeGreaterThanOrEqual(acked)
    // Whole batches only: a batch is one transaction.
    expect(stored % 200).toBe(0)
  }, 60_000)

  it('gives a clear error, after its busy timeout, when another process holds the file locked', () => {
    const file = join(dir, 'locked.sqlite')
    new MemoryStore({ path: file }).close()
    // Another process (Python's sqlite3) takes an exclusive lock and keeps it for 8 s.
    const locker = spawn('python3', ['-c', `import sqlite3,time,sys\nc=sqlite3.connect(sys.argv[1],isolation_level=None)\nc.execute('BEGIN EXCLUSIVE')\nprint('locked',flush=True)\ntime.sleep(8)`, file], { stdio: ['ignore', 'pipe', 'inherit'] })
    return new Promise<void>((resolve, reject) => {
      locker.stdout.once('data', () => {
        try {
          const m = new MemoryStore({ path: file })
          const t0 = Date.now()
          const err = thrown(() => m.ingest([{ sessionId: 's', chatId: 'c', messageId: '1', role: 'user', text: 'hi', ts: 1 }]))
          const waited = Date.now() - t0
          expect(err).toMatchObject({ code: 'ERR_MEMORY_STORAGE' })
          expect(String(err)).toMatch(/MemoryStore\.ingest: SQLite: database is locked/)
          expect(waited).toBeGreaterThanOrEqual(4_000)
          m.close()
          locker.kill()
          resolve()
        } catch (e) {
          locker.kill()
          reject(e)
        }
      })
    })
  }, 30_000)

  it('gives a clear error, never a crash, on a file corrupted under it', () => {
    const file = join(dir, 'corrupt.sqlite')
    const m = new MemoryStore({ path: file })
    m.ingest(Array.from({ length: 2_000 }, (_, i) => ({ sessionId: 's', chatId: 'c', messageId: String(i), role: 'user' as const, text: `message ${i} ${'y'.repeat(200)}`, ts: i })))
    m.close()
    // Overwrite pages in the middle of the file (keeping the header) with garbage.
    const size = statSync(file).size
    const fd = openSync(file, 'r+')
    const junk = Buffer.alloc(16 * 4096, 0xa5)
    writeSync(fd, junk, 0, junk.length, Math.floor(size / 2 / 4096) * 4096)
    const header = Buffer.alloc(16)
    readSync(fd, header, 0, 16, 0)
    closeSync(fd)
    expect(header.toString('latin1')).toBe('SQLite format 3\u0000')
    // In a child process, so that a crash would show as a signal rather than take vitest down.
    const script = `
      const { MemoryStore } = require('@openclaw/context-engine')
      try {
        const m = new MemoryStore({ path: ${JSON.stringify(file)} })
        for (let i = 0; i < 2000; i += 100) m.recent('s', 'root:c', 100000)
        m.ingest([{ sessionId: 's', chatId: 'c', messageId: 'new', role: 'user', text: 'x', ts: 1 }])
        console.log('no error')
      } catch (e) { console.log(e.code + ' ' + e.message) }`
    const run = spawnSync(process.execPath, ['-e', script], { cwd: join(__dirname, '..'), encoding: 'utf8' })
    expect(run.signal).toBeNull()
    expect(run.status).toBe(0)
    expect(run.stdout).toMatch(/^ERR_MEMORY_STORAGE MemoryStore\.\w+: SQLite: database disk image is malformed/)
  })
})
