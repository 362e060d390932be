'use strict'

// What the engine knows of a lane between its calls, kept in memory and, for what must
// outlive the process (OpenClaw runs `openclaw agent --local` as a process a turn, and a
// gateway restarts), in the lane's `thread_state` record of the store, beside what the
// store itself keeps there (a pending question).
//
// Kept in the store:
//   verbatim, foldThrough  what the last first assembly of a turn decided (maintain and
//                          afterTurn act on it)
//   window                 the model's context window the host runs the lane with
//   reserve                what the host keeps for the reply below its threshold
//                          (OpenClaw's first assembly names it `maxOutputTokens`)
//   output                 the reply's tokens: the model's `maxTokens`, else the reserve
//   overhead               what the host's requests hold besides the engine's context
//                          (its system prompt, tools, runtime notes), learnt from the
//                          model's usage
//   sent                   the engine's central estimate of its last context, as sent
//   usageOf                the message whose usage taught `overhead`
//   cap                    the most the lane's contexts may take, after the host said a
//                          request was or would be past its limit
//   tokens, floor          the last context's tokens, and what it had to hold
// In memory only: the first assembly of the current turn (its prompt, budget and what it
// returned), which a later assembly of the same turn gives again, and what was last written.

/** The fields kept in the store. */
const KEPT = ['verbatim', 'foldThrough', 'window', 'reserve', 'output', 'overhead', 'sent', 'usageOf', 'cap', 'tokens', 'floor']
/** Lanes held in memory (the newest). */
const MAX_LANES = 10_000

class LaneStates {
  /** @param {() => Promise<import('../index.js').MemoryStore | import('../index.js').SharedMemoryStore>} memory the open store */
  constructor(memory) {
    this.memory = memory
    this.lanes = new Map()
  }

  /** The lane's state: held, else read from the store; `{}` for a lane never assembled. */
  async get(place, lane) {
    const key = `${place.sessionId}\u0000${lane}`
    let state = this.lanes.get(key)
    if (state === undefined) {
      const read = await this.read(place.sessionId, lane)
      // Another call of the engine may have read it meanwhile: one state per lane.
      state = this.lanes.get(key) ?? read
      this.hold(key, state)
    }
    return state
  }

  /**
   * Writes the kept fields of the lane's state into its `thread_state` record, when they
   * changed since they were read or last written.
   */
  async save(place, lane) {
    const state = await this.get(place, lane)
    const kept = Object.fromEntries(KEPT.filter((k) => state[k] !== undefined).map((k) => [k, state[k]]))
    const written = JSON.stringify(kept)
    if (written === state.written) return
    const memory = await this.memory()
    const body = parse((await memory.record(place.sessionId, 'thread_state', lane))?.body)
    body.window = kept
    await memory.putRecord({ sessionId: place.sessionId, kind: 'thread_state', threadKey: lane, body: JSON.stringify(body) })
    state.written = written
  }

  /** Forgets what the first assembly of the lane's current turn returned. */
  async newTurn(place, lane) {
    const state = await this.get(place, lane)
    state.turn = undefined
  }

  async read(sessionId, lane) {
    const record = await (await this.memory()).record(sessionId, 'thread_state', lane)
    const kept = parse(record?.body).window
    if (kept === null || typeof kept !== 'object' || Array.isArray(kept)) return {}
    const state = Object.fromEntries(KEPT.filter((k) => k in kept).map((k) => [k, kept[k]]))
    state.written = JSON.stringify(state)
    return state
  }

  hold(key, state) {
    this.lanes.delete(key)
    this.lanes.set(key, state)
    if (this.lanes.size > MAX_LANES) this.lanes.delete(this.lanes.keys().next().value)
  }
}

function parse(body) {
  if (typeof body !== 'string') return {}
  try {
    const v = JSON.parse(body)
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : {}
  } catch {
    return {}
  }
}

module.exports = { LaneStates }
