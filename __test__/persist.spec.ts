// A ChannelStore saved to SQLite (options.persist): a restarted gateway answers from the
// file without a chat-API call while the data is within its TTLs, judged by the times it
// was fetched; processes killed with SIGKILL after an acknowledged flush lose nothing; two
// processes write one file at once; the file is shared with the MemoryStore.
import { spawn } from 'node:child_process'
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ChannelStore, MemoryStore, type ChannelEvent } from '@openclaw/context-engine'
import { thrown } from './helpers'

const dir = mkdtempSync(join(tmpdir(), 'channel-persist-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
const child = join(__dirname, 'scripts', 'channel-persist-child.cjs')

/** 2026-04-10T16:40:00Z, an hour after the fake workspace's first message. */
const NOW = 1775835600000 + 3_600_000
const C = 'C07ROLLOUT'
const ts = (s: number) => `${1775835600 + s}.000100`
const post = (s: number, text = `message ${s}`, channelId = C): ChannelEvent => ({
  type: 'message',
  channelId,
  message: { ts: ts(s), text, author: { userId: `U${s % 3}`, displayName: 'Sam' } },
})

interface Line {
  [key: string]: any
}

/** Runs the child; resolves with its JSON lines once `until` matches one (then kills it
 * with SIGKILL), or once it exits. */
function run(args: string[], until?: (l: Line) => boolean): Promise<Line[]> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [child, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    const lines: Line[] = []
    let out = ''
    let err = ''
    proc.stderr.on('data', (d: Buffer) => (err += d.toString()))
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const parts = out.split('\n')
      out = parts.pop() ?? ''
      for (const p of parts) {
        const l = JSON.parse(p) as Line
        lines.push(l)
        if (until?.(l)) proc.kill('SIGKILL')
      }
    })
    proc.on('error', reject)
    proc.on('exit', (code, signal) => {
      if (code === 0 || signal === 'SIGKILL') resolve(lines)
      else reject(new Error(`child ${args[0]} exited ${code ?? signal}: ${err}`))
    })
  })
}

describe('ChannelStore saved to a file', () => {
  it('answers after a SIGKILL restart with 0 API calls and the same prompt section to the byte', async () => {
    const file = join(dir, 'restart.sqlite')
    const first = await run(['first', file, String(NOW)], (l) => 'flushed' in l)
    const built = first.find((l) => 'built' in l)!.built
    // Before the kill: the channel's history and the thread were fetched once each.
    expect(built.calls).toEqual(['conversations.history', 'conversations.replies'])
    expect(built.prompt).toContain('Is step 5 safe to start?')
    expect(built.prompt).toContain('step 5: canary at 60%')
    expect(first.find((l) => 'flushed' in l)!.flushed.writtenRows).toBeGreaterThan(40)

    const again = (await run(['again', file, String(NOW)]))[0].again
    expect(again.calls).toEqual([])
    expect(again.prompt).toBe(built.prompt)
    expect(again.loaded.loadedRows).toBeGreaterThan(40)
    expect(again.loaded.corruptRows).toBe(0)
    // The deletion, the reaction and the names learned from events came back too.
    expect(again.prompt).not.toContain('to be deleted')
    expect(again.prompt).toContain('Aiko')
  })

  it('judges TTLs by the stored fetch times: 4 minutes after the fetch nothing is fetched, 6 minutes after the thread is', async () => {
    const file = join(dir, 'ttl.sqlite')
    await run(['first', file, String(NOW)], (l) => 'flushed' in l)
    const within = (await run(['again', file, String(NOW + 4 * 60_000)]))[0].again
    expect(within.calls).toEqual([])
    // The 5-minute replies TTL ran from the first process's fetch, not from the restart;
    // the channel's history stays loaded (events keep it current).
    const past = (await run(['again', file, String(NOW + 6 * 60_000)]))[0].again
    expect(past.calls).toEqual(['conversations.replies'])
  })

  it('takes two processes writing one file at once (WAL), and both channels are there after', async () => {
    const file = join(dir, 'shared.sqlite')
    const [a, b] = await Promise.all([run(['writer', file, 'CA', '3000']), run(['writer', file, 'CB', '3000'])])
    expect(a[0].stats.failedBatches).toBe(0)
    expect(b[0].stats.failedBatches).toBe(0)
    // Each writer's window held its channel's newest 1,000 (the default window); so does
    // the file, and a store opened on it.
    const store = new ChannelStore({ persist: { path: file } })
    expect(store.stats().messages).toBe(2000)
    for (const channel of ['CA', 'CB']) {
      const ctx = await store.buildContext(channel, ts(2999), { adjacent: 2 })
      expect(ctx.snapshot?.anchor.text).toBe(`${channel} message 2999`)
      expect(ctx.snapshot?.adjacent.map((m) => m.snippet)).toEqual([`${channel} message 2997`, `${channel} message 2998`])
    }
    await store.close()
  })

  it('shares a file with the MemoryStore', async () => {
    const file = join(dir, 'with-memory.sqlite')
    const memory = new MemoryStore({ path: file })
    memory.ingest([{ sessionId: 's1', chatId: 'c', messageId: 'm1', role: 'user', text: 'remember the canary', ts: 1 }])
    const store = new ChannelStore({ persist: { path: file } })
    store.ingestMany([post(1), post(2)])
    await store.flush()
    await store.close()
    memory.close()
    const back = new ChannelStore({ persist: { path: file } })
    expect(back.stats().messages).toBe(2)
    await back.close()
    const memoryBack = new MemoryStore({ path: file })
    expect(memoryBack.recent('s1', 'root:c', 10).map((m) => m.text)).toEqual(['remember the canary'])
    memoryBack.close()
  })

  it('keeps edits, deletions and channel settings across a reopen in one process', async () => {
    const file = join(dir, 'edits.sqlite')
    const store = new ChannelStore({ persist: { path: file } })
    store.setChannel({ id: C, name: 'rollout', platform: 'slack' })
    store.ingestMany([post(1, 'first'), post(2, 'second'), post(3, 'third')])
    store.ingest({ type: 'message_changed', channelId: C, messageId: ts(2), text: 'second, edited' })
    store.ingest({ type: 'message_deleted', channelId: C, messageId: ts(3) })
    await store.close()
    const back = new ChannelStore({ persist: { path: file } })
    const ctx = await back.buildContext(C, ts(2), { adjacent: 5 })
    expect(ctx.snapshot?.channel.name).toBe('rollout')
    expect(ctx.snapshot?.anchor.text).toBe('second, edited')
    expect(ctx.snapshot?.adjacent.map((m) => m.snippet)).toEqual(['first'])
    // A late copy of the deleted message (a fetch, a replayed event) stays out.
    back.ingest(post(3, 'third'))
    expect(back.stats().messages).toBe(2)
    await back.close()
  })

  it('saves media bytes only within persist.mediaMaxBytes; file locations always', async () => {
    const file = { artifactId: 'F07SCREEN01', mediaType: 'image/png', filename: 'canary.png', byteLength: 4, url: 'https://files.example/F07SCREEN01' }
    const open = (path: string, mediaMaxBytes: number, downloads: unknown[]) =>
      new ChannelStore({
        persist: { path, mediaMaxBytes },
        fetcher: {
          async fetchMedia(req) {
            downloads.push(req)
            return new Uint8Array([1, 2, 3, 4])
          },
        },
      })
    for (const [budget, downloadsAfter] of [
      [1024, 0],
      [0, 1],
    ] as const) {
      const path = join(dir, `media-${budget}.sqlite`)
      const first: unknown[] = []
      const store = open(path, budget, first)
      store.ingest({ type: 'message', channelId: C, message: { ts: ts(1), text: 'graph', author: { userId: 'U1', displayName: 'Sam' }, media: [file] } })
      expect((await store.getMedia('F07SCREEN01', C)).apiCalls).toBe(1)
      await store.close()
      const again: unknown[] = []
      const back = open(path, budget, again)
      // The file's location came back either way (the message references it); the
      // bytes only with a budget for them.
      const m = await back.getMedia('F07SCREEN01', C)
      expect(again).toHaveLength(downloadsAfter)
      expect([...(m.data ?? [])]).toEqual([1, 2, 3, 4])
      expect(m.contentHash).toBe('9f64a747e1b97f131fabb6b447296c9b6f0201e79fb3c5356e6c77e89b6a806a')
      await back.close()
    }
  })

  it('reports its writer in stats(), and flush/close resolve with it (null in memory)', async () => {
    const memoryOnly = new ChannelStore()
    expect(memoryOnly.stats().persist).toBeNull()
    expect(await memoryOnly.flush()).toBeNull()
    expect(await memoryOnly.close()).toBeNull()

    const file = join(dir, 'stats.sqlite')
    const store = new ChannelStore({ persist: { path: file } })
    store.ingestMany([post(1), post(2)])
    const flushed = await store.flush()
    expect(flushed).toMatchObject({ path: file, writtenRows: 2, queuedRows: 0, failedBatches: 0, deferred: 0, lastError: null, closed: false })
    expect(flushed!.commits).toBeGreaterThanOrEqual(1)
    const closed = await store.close()
    expect(closed!.closed).toBe(true)
    expect(store.stats().persist!.closed).toBe(true)
    // Closed: the store goes on in memory; a flush says its changes are not saved.
    store.ingest(post(3))
    expect(store.stats().messages).toBe(3)
    await expect(store.flush()).rejects.toThrow(/ChannelStore\.flush: the store's saving was closed/)
    await expect(store.flush()).rejects.toMatchObject({ code: 'ERR_PERSIST_CLOSED' })
    expect(await store.close()).toMatchObject({ closed: true })
  })

  it('once close() resolves, the .sqlite file alone (a copy without its -wal) holds everything', async () => {
    const file = join(dir, 'backup.sqlite')
    const store = new ChannelStore({ persist: { path: file } })
    store.ingestMany(Array.from({ length: 300 }, (_, i) => post(i, `message ${i} `.repeat(20))))
    await store.close()
    expect(existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0).toBe(0)
    const copy = join(dir, 'backup-copy.sqlite')
    copyFileSync(file, copy)
    const back = new ChannelStore({ persist: { path: copy } })
    expect(back.stats().messages).toBe(300)
    expect(back.getMessage(C, ts(299))?.text).toBe('message 299 '.repeat(20))
    await back.close()
  })

  it('rejects bad persist options naming the field, and names a file it cannot open', () => {
    const e1 = thrown(() => new ChannelStore({ persist: { path: '' } }))
    expect(e1).toBeInstanceOf(TypeError)
    expect((e1 as any).path).toBe('options.persist.path')
    const e2 = thrown(() => new ChannelStore({ persist: { path: join(dir, 'x.db'), queueMaxRows: 0 } }))
    expect(e2).toBeInstanceOf(RangeError)
    expect(e2.message).toMatch(/options\.persist\.queueMaxRows: must be at least 1/)
    const e3 = thrown(() => new ChannelStore({ persist: { path: join(dir, 'x.db'), wal: true } as never }))
    expect(e3.message).toMatch(/options\.persist\.wal: unknown field/)
    const missing = join(dir, 'no-such-dir', 'x.db')
    const e4 = thrown(() => new ChannelStore({ persist: { path: missing } }))
    expect(e4.message).toContain(`ChannelStore: options.persist.path ${JSON.stringify(missing)}: could not open the saved state`)
    expect(e4).toMatchObject({ code: 'ERR_PERSIST_STORAGE' })
  })
})
