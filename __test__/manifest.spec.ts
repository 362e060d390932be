import { describe, expect, it } from 'vitest'
import {
  ATTACHMENT_MANIFEST_KEY,
  checkAttachment,
  createAttachmentManifest,
  getThreadAttachments,
  isAlreadyAttached,
  loadManifestFromEntries,
  recordAttachment,
  serializeManifest,
  type AttachmentRecord,
} from '@openclaw/context-engine'
import { thrown } from './helpers'

function record(id: string, hash: string, thread: string | null = '1775853000.000100'): AttachmentRecord {
  return {
    artifact_id: id,
    display_name: `${id}.png`,
    media_type: 'image/png',
    content_hash: hash,
    source_message_id: '1775853001.000200',
    source_thread_id: thread,
    included_at_turn: 2,
  }
}

const entry = (data: unknown) => ({ type: 'custom', customType: ATTACHMENT_MANIFEST_KEY, data })

describe('attachment manifest as a plain object', () => {
  it('starts empty and is mutated in place by recordAttachment', () => {
    const m = createAttachmentManifest()
    expect(m).toEqual({ entries: {} })
    // Returns nothing, as the runner's module did: the manifest is what changes.
    expect(recordAttachment(m, record('F1', 'aa'))).toBeUndefined()
    expect(Object.keys(m.entries)).toEqual(['F1'])
    expect(m.entries.F1).toEqual(record('F1', 'aa'))
    expect(m.entries.F1.display_name).toBe('F1.png')
    expect(JSON.parse(JSON.stringify(m))).toEqual({ entries: { F1: record('F1', 'aa') } })
  })

  it('accepts a record in camelCase and stores it in the seed schema', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, {
      artifactId: 'F9',
      displayName: 'diagram.pdf',
      mediaType: 'application/pdf',
      contentHash: 'ff',
      sourceMessageId: '1.2',
      sourceThreadId: null,
      includedAtTurn: 0,
    })
    expect(m.entries.F9).toEqual({
      artifact_id: 'F9',
      display_name: 'diagram.pdf',
      media_type: 'application/pdf',
      content_hash: 'ff',
      source_message_id: '1.2',
      source_thread_id: null,
      included_at_turn: 0,
    })
  })

  it('matches isAlreadyAttached by artifact id', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, record('F1', 'aa'))
    expect(isAlreadyAttached(m, 'F1', 'aa')).toBe(true)
    expect(isAlreadyAttached(m, 'F1')).toBe(true)
    expect(isAlreadyAttached(m, 'F2', 'aa')).toBe(false)
    expect(isAlreadyAttached(m, 'toString')).toBe(false)
    expect(isAlreadyAttached(m, '__proto__')).toBe(false)
  })

  it('detects a re-upload by content hash with checkAttachment', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, record('F1', 'aa'))
    recordAttachment(m, record('F2', 'bb'))
    expect(checkAttachment(m, { artifactId: 'F1', contentHash: 'zz' })).toEqual({ match: 'artifact_id', record: m.entries.F1 })
    const reupload = checkAttachment(m, { artifactId: 'F77', contentHash: 'bb' })
    expect(reupload.match).toBe('content_hash')
    expect(reupload.record).toBe(m.entries.F2)
    expect(checkAttachment(m, { artifactId: 'F77', contentHash: 'cc' })).toEqual({ match: 'none', record: null })
    expect(checkAttachment(m, { artifactId: 'F77' })).toEqual({ match: 'none', record: null })
    expect(checkAttachment(m, { artifactId: 'F77', contentHash: '' })).toEqual({ match: 'none', record: null })
  })

  it('selects a thread with getThreadAttachments, null meaning top-level', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, record('F1', 'a', 'T1'))
    recordAttachment(m, record('F2', 'b', null))
    recordAttachment(m, record('F3', 'c', 'T1'))
    recordAttachment(m, record('F4', 'd', 'T2'))
    expect(getThreadAttachments(m, 'T1').map((r) => r.artifact_id)).toEqual(['F1', 'F3'])
    expect(getThreadAttachments(m, 'T1')[0]).toBe(m.entries.F1)
    expect(getThreadAttachments(m, null).map((r) => r.artifact_id)).toEqual(['F2'])
    expect(getThreadAttachments(m, 'T9')).toEqual([])
  })

  it('rejects bad arguments with errors naming the field', () => {
    const m = createAttachmentManifest()
    expect(thrown(() => isAlreadyAttached(null as never, 'F1')).message).toBe('isAlreadyAttached: manifest: expected an object, got null')
    expect(thrown(() => isAlreadyAttached({} as never, 'F1')).message).toBe(
      'isAlreadyAttached: manifest.entries: expected an object, got undefined',
    )
    expect(thrown(() => isAlreadyAttached(m, 5 as never))).toBeInstanceOf(TypeError)
    const missing = thrown(() => recordAttachment(m, { ...record('F1', 'a'), content_hash: undefined } as never))
    expect(missing).toBeInstanceOf(TypeError)
    expect(missing.message).toBe('recordAttachment: record.content_hash: is required')
    const empty = thrown(() => recordAttachment(m, record('', 'a')))
    expect(empty).toBeInstanceOf(RangeError)
    expect(empty.message).toBe('recordAttachment: record: artifact_id must be a non-empty string')
    const turn = thrown(() => recordAttachment(m, { ...record('F1', 'a'), included_at_turn: -1 }))
    expect(turn).toBeInstanceOf(RangeError)
    expect(Object.keys(m.entries)).toEqual([])
    expect(thrown(() => checkAttachment(m, { contentHash: 'a' } as never)).message).toBe(
      'checkAttachment: candidate.artifactId: expected a string, got undefined',
    )
  })
})

describe('serializeManifest / loadManifestFromEntries', () => {
  it('round-trips through a session entry', () => {
    const m = createAttachmentManifest()
    for (let i = 0; i < 50; i++) recordAttachment(m, record(`F${i}`, `h${i}`, i % 3 ? 'T' : null))
    const text = serializeManifest(m)
    expect(text).toBe(JSON.stringify(m))
    const loaded = loadManifestFromEntries([{ type: 'message' }, entry(text)])
    expect(loaded).toEqual(m)
    expect(Object.keys(loaded.entries)).toEqual(Object.keys(m.entries))
  })

  it('names the bad record when serializing', () => {
    const m = createAttachmentManifest()
    recordAttachment(m, record('F1', 'aa'))
    ;(m.entries.F1 as unknown as Record<string, unknown>).content_hash = 12
    const e = thrown(() => serializeManifest(m))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toMatch(/^serializeManifest: entries\.F1\.content_hash: expected a string/)
    const keyed = { entries: { F2: record('F1', 'aa') } }
    expect(thrown(() => serializeManifest(keyed)).message).toMatch(/^serializeManifest: entries\.F2\.artifact_id: must equal its key/)
    expect(thrown(() => serializeManifest(null as never))).toBeInstanceOf(TypeError)
  })

  it('takes the newest manifest entry', () => {
    const older = { entries: { F1: record('F1', 'a') } }
    const newer = { entries: { F1: record('F1', 'a'), F2: record('F2', 'b') } }
    const loaded = loadManifestFromEntries([entry(JSON.stringify(older)), { type: 'custom', customType: 'other', data: '{}' }, entry(JSON.stringify(newer))])
    expect(Object.keys(loaded.entries)).toEqual(['F1', 'F2'])
    // data may also be the object itself
    expect(loadManifestFromEntries([entry(newer)])).toEqual(newer)
  })

  it('falls back to the newest valid manifest when the newest entry is malformed', () => {
    const good = { entries: { F1: record('F1', 'a') } }
    for (const broken of ['{"entries": {"F1": ', 'null', '[]', '{"entries": 5}', '{"entries":{"F2":{"artifact_id":"F2"}}}', 42, null]) {
      const loaded = loadManifestFromEntries([entry(JSON.stringify(good)), entry(broken)])
      expect(loaded, String(broken)).toEqual(good)
    }
  })

  it('drops records that fail validation one by one, not wholesale', () => {
    const data = {
      entries: {
        F1: record('F1', 'a'),
        F2: { ...record('F2', 'b'), content_hash: 7 },
        F3: record('F3', 'c'),
        F4: record('F999', 'd'),
        F5: { ...record('F5', 'e'), display_name: '' },
        F6: 'junk',
      },
    }
    const loaded = loadManifestFromEntries([entry(JSON.stringify(data))])
    expect(Object.keys(loaded.entries)).toEqual(['F1', 'F3'])
  })

  it('starts empty when there is nothing usable, and never throws', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('boom')
        },
      },
    )
    const getter = Object.defineProperty({ type: 'custom', customType: ATTACHMENT_MANIFEST_KEY }, 'data', {
      enumerable: true,
      get() {
        throw new Error('getter boom')
      },
    })
    const cyclic: Record<string, unknown> = {}
    cyclic.entries = cyclic
    const good = { entries: { F1: record('F1', 'a') } }
    for (const junk of [undefined, null, 5, 'text', {}, [], [null, 1, 'x', [], {}], [hostile], [entry(cyclic)], [entry({ toJSON: () => { throw new Error('x') } })], hostile]) {
      expect(loadManifestFromEntries(junk as never)).toEqual({ entries: {} })
    }
    // Junk after a good entry does not hide it.
    expect(loadManifestFromEntries([entry(JSON.stringify(good)), hostile, getter, entry(cyclic)] as never)).toEqual(good)
  })
})
