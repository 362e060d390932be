// With packText, a store packs the text of the messages it holds once it has seen 16 KB
// of them: every way a text leaves the store (getMessage, the prompt section, the tools,
// a saved file, an edit) gives it back to the character, and the store holds fewer bytes
// than the text. Without it (the default), every text is held as it came.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { ChannelStore, type ChannelEvent } from '@openclaw/context-engine'

const dir = mkdtempSync(join(tmpdir(), 'packed-text-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const T0 = 1775835600
const C = 'C07PACKED'
const ts = (s: number) => `${T0 + s}.000100`
const LINES = [
  'the canary for checkout-service is at 5%, p99 latency looks fine so far',
  'can someone review the schema migration before we merge it? 🙏',
  'Der Déploiement ist fehlgeschlagen, ich rolle zurück — Überprüfung läuft',
  'auth-gatewayのデプロイが完了しました。ロールバックは不要です',
  'incident review moved to tomorrow, the release flag stays off until then',
]
/** Message `s`: chat-like, with a number no other message has. */
const text = (s: number) => `${LINES[s % LINES.length]} (#${s}) ${LINES[(s * 7) % LINES.length]}`
const post = (s: number, body = text(s)): ChannelEvent => ({
  type: 'message',
  channelId: C,
  message: { ts: ts(s), text: body, author: { userId: `U${s % 4}`, displayName: `user${s % 4}` } },
})
const COUNT = 600
const rawBytes = Array.from({ length: COUNT }, (_, i) => Buffer.byteLength(text(i + 1))).reduce((a, b) => a + b, 0)

describe('packed message text', () => {
  it('gives every text back to the character while holding fewer bytes than the text', async () => {
    const file = join(dir, 'packed.sqlite')
    const store = new ChannelStore({ clock: () => (T0 + 3600) * 1000, persist: { path: file }, packText: true })
    store.ingestMany(Array.from({ length: COUNT }, (_, i) => post(i + 1)))
    for (let s = 1; s <= COUNT; s++) expect(store.getMessage(C, ts(s))?.text).toBe(text(s))
    // What the texts take: the store's bytes less those of the same messages without
    // text. The first 16 KB stay as they came (the sample the store learns from).
    const empty = new ChannelStore()
    empty.ingestMany(Array.from({ length: COUNT }, (_, i) => post(i + 1, '')))
    const textBytes = (s: ChannelStore) => s.stats().messageBytes - empty.stats().messageBytes
    expect(textBytes(store)).toBeLessThan(16 * 1024 + (rawBytes - 16 * 1024) * 0.6)

    const built = await store.buildContext(C, ts(COUNT))
    // The anchor in full; the messages around it as snippets, their first 150 characters.
    expect(built.promptSection).toContain(`"text":${JSON.stringify(text(COUNT))}`)
    for (let s = COUNT - 5; s < COUNT; s++) expect(built.promptSection).toContain(`"snippet":${JSON.stringify(text(s).slice(0, 100)).slice(0, -1)}`)

    const tools = store.tools(C)
    const found = JSON.parse(await tools.execute('channel_context', { intent: 'Überprüfung (#503)' }))
    const hit = found.results.find((r: { message_id: string }) => r.message_id === ts(503))
    expect(hit?.text).toBe(text(503))
    const listed = JSON.parse(await tools.execute('channel_messages', { message_ids: [ts(42), ts(555)] }))
    expect(listed.messages.map((m: { text: string }) => m.text)).toEqual([text(42), text(555)])

    store.ingest({ type: 'message_changed', channelId: C, messageId: ts(555), text: 'edited: デプロイ done 🚀' })
    expect(store.getMessage(C, ts(555))?.text).toBe('edited: デプロイ done 🚀')
    await store.flush()
    await store.close()

    const back = new ChannelStore({ clock: () => (T0 + 3600) * 1000, persist: { path: file }, packText: true })
    for (let s = 1; s <= COUNT; s++) expect(back.getMessage(C, ts(s))?.text).toBe(s === 555 ? 'edited: デプロイ done 🚀' : text(s))
    expect(textBytes(back)).toBeLessThan(16 * 1024 + (rawBytes - 16 * 1024) * 0.6)
    await back.close()
  })

  it('keeps every text as it came by default and with packText: false', () => {
    const store = new ChannelStore()
    store.ingestMany(Array.from({ length: COUNT }, (_, i) => post(i + 1)))
    const empty = new ChannelStore({ packText: false })
    empty.ingestMany(Array.from({ length: COUNT }, (_, i) => post(i + 1, '')))
    // Each text is held whole (both stores add the byte that says it is not packed).
    expect(store.stats().messageBytes - empty.stats().messageBytes).toBe(rawBytes)
    const off = new ChannelStore({ packText: false })
    off.ingestMany(Array.from({ length: COUNT }, (_, i) => post(i + 1)))
    expect(off.stats().messageBytes).toBe(store.stats().messageBytes)
    for (let s = 1; s <= COUNT; s++) expect(store.getMessage(C, ts(s))?.text).toBe(text(s))
    expect(() => new ChannelStore({ packText: 'yes' } as never)).toThrow(TypeError)
  })
})
