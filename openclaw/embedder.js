'use strict'

// A host's embedding model, for the engine's memory: OpenClaw's embedding provider shape
// (`{ embedBatch(texts), embedQuery?(text) }`, number arrays) or a plain function
// `embed(texts) -> vectors`. The engine gives it the stored messages that have no vector
// yet after each turn, and the question before each assembly, so retrieval finds a turn
// by what it means as well as by its words. The engine never embeds by itself and makes
// no network call of its own: the host's model does. Every call has a time limit; a fault
// or a late answer is a diagnostic, and the words alone are searched.

/** How long one call of the host's model may take (ms). */
const EMBED_TIMEOUT_MS = 5_000
/** Messages given to the model in one call. */
const EMBED_BATCH = 64
/** Calls per catch-up after a turn (a long history is embedded over several turns). */
const EMBED_CALLS_PER_TURN = 4

class Embedder {
  /**
   * @param {Function | { embedBatch: Function, embedQuery?: Function }} model
   * @param {(method: string, err: unknown) => void} note
   */
  constructor(model, note) {
    this.model = model
    this.note = note
  }

  /** The host's `embedder` as an Embedder; null (with a note) when it is not one. */
  static of(model, note) {
    if (model === undefined || model === null) return null
    if (typeof model === 'function' || typeof model?.embedBatch === 'function') return new Embedder(model, note)
    note('embedder', new TypeError('host.embedder: expected a function embed(texts) or an object with embedBatch(texts); embedding off'))
    return null
  }

  /** The model's vectors of `texts`, within the time limit. */
  async vectors(texts) {
    const out = await withinLimit(typeof this.model === 'function' ? this.model(texts) : this.model.embedBatch(texts))
    if (!Array.isArray(out) || out.length !== texts.length) {
      throw new TypeError(`the embedder returned ${Array.isArray(out) ? `${out.length} vectors` : typeof out} for ${texts.length} texts`)
    }
    return out
  }

  /** The question's vector (a provider's `embedQuery` when it has one); null when the
   * model failed (noted). */
  async query(text) {
    if (typeof text !== 'string' || text.trim() === '') return null
    try {
      const provider = typeof this.model !== 'function' && typeof this.model.embedQuery === 'function'
      const v = provider ? await withinLimit(this.model.embedQuery(text)) : (await this.vectors([text]))[0]
      // A vector the store would refuse fails the question's search, not the turn.
      if (!isVector(v)) throw new TypeError(`the embedder's vector for the question is not one (${describe(v)}); words only`)
      return v
    } catch (err) {
      this.note('embedder', err)
      return null
    }
  }

  /**
   * Gives the session's stored messages without a vector theirs, a batch per call, at
   * most EMBED_CALLS_PER_TURN calls; returns how many were given one.
   * @param {import('../index').MemoryStore} store
   */
  async catchUp(store, sessionId) {
    let done = 0
    try {
      for (let call = 0; call < EMBED_CALLS_PER_TURN; call++) {
        const pending = await store.messagesToEmbed(sessionId, EMBED_BATCH)
        if (pending.length === 0) break
        const vectors = await this.vectors(pending.map((m) => m.text))
        await store.setVectors(sessionId, pending.map((m, i) => ({ messageId: m.messageId, vector: vectors[i] })))
        done += pending.length
      }
    } catch (err) {
      this.note('embedder', err)
    }
    return done
  }
}

/** The most numbers a vector the store keeps may hold. */
const MAX_DIMS = 4_096

/** Whether `v` is what the store takes as a vector: 1 to MAX_DIMS finite numbers. */
function isVector(v) {
  if (!(Array.isArray(v) || v instanceof Float32Array)) return false
  if (v.length === 0 || v.length > MAX_DIMS) return false
  for (let i = 0; i < v.length; i++) if (typeof v[i] !== 'number' || !Number.isFinite(v[i])) return false
  return true
}

function describe(v) {
  if (Array.isArray(v) || ArrayBuffer.isView(v)) return `${v.constructor.name} of ${v.length}`
  return v === null ? 'null' : typeof v
}

/** `promise`'s value, or a rejection once EMBED_TIMEOUT_MS have passed. */
async function withinLimit(promise) {
  let timer
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the embedder took over ${EMBED_TIMEOUT_MS} ms`)), EMBED_TIMEOUT_MS)
  })
  try {
    return await Promise.race([Promise.resolve(promise), late])
  } finally {
    clearTimeout(timer)
  }
}

module.exports = { Embedder, EMBED_TIMEOUT_MS, EMBED_BATCH, EMBED_CALLS_PER_TURN }
