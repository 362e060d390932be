import { describe, expect, it } from 'vitest'
import { createHash } from 'node:crypto'
import { sha256Hex, sha256HexAsync } from '@openclaw/context-engine'
import { thrown } from './helpers'

const nodeSha = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex')

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 test vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855')
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('hashes strings as their UTF-8 bytes, like node:crypto', () => {
    for (const s of ['hello', 'デプロイ 🚀', '👩‍💻', 'x'.repeat(100_000), 'lone \ud800 surrogate', '\udc00']) {
      expect(sha256Hex(s)).toBe(nodeSha(s))
    }
  })

  it('hashes the bytes of Buffers and Uint8Arrays, respecting views', () => {
    const bytes = new Uint8Array(4096).map((_, i) => (i * 31) & 0xff)
    expect(sha256Hex(bytes)).toBe(nodeSha(bytes))
    expect(sha256Hex(Buffer.from(bytes))).toBe(nodeSha(bytes))
    const view = bytes.subarray(100, 300)
    expect(sha256Hex(view)).toBe(nodeSha(view))
    expect(sha256Hex(new Uint8Array(0))).toBe(nodeSha(''))
  })

  it('rejects other types with a TypeError', () => {
    for (const bad of [undefined, null, 5, {}, [1, 2], new Float32Array(2), new ArrayBuffer(4)]) {
      const e = thrown(() => sha256Hex(bad as never))
      expect(e).toBeInstanceOf(TypeError)
      expect(e.message).toMatch(/^sha256Hex: data: expected a string, Buffer or Uint8Array, got /)
    }
  })
})

describe('sha256HexAsync', () => {
  it('resolves to the same digest as the sync version', async () => {
    const buf = Buffer.alloc(3 * 1024 * 1024, 7)
    await expect(sha256HexAsync(buf)).resolves.toBe(nodeSha(buf))
    await expect(sha256HexAsync('abc')).resolves.toBe(nodeSha('abc'))
    await expect(sha256HexAsync(buf.subarray(10, 20))).resolves.toBe(nodeSha(buf.subarray(10, 20)))
  })

  it('hashes a 50 MB upload off the JS thread: the event loop keeps turning', async () => {
    const upload = Buffer.alloc(50 * 1024 * 1024, 0xab)
    let turns = 0
    let settled = false
    const spin = () => {
      if (settled) return
      turns += 1
      setImmediate(spin)
    }
    setImmediate(spin)
    const digest = await sha256HexAsync(upload).finally(() => {
      settled = true
    })
    expect(digest).toBe(nodeSha(upload))
    // Hashing on the JS thread would let no setImmediate callback run before the result.
    expect(turns).toBeGreaterThan(0)
  })

  it('throws a TypeError synchronously for a wrong type', () => {
    const e = thrown(() => sha256HexAsync(42 as never))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('sha256HexAsync: data: expected a string, Buffer or Uint8Array, got number')
  })
})
