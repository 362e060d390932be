// Fetching as steps: a build, a download or a tool call that lacks data is a run the
// store drives through one hidden step (`_step`), performed by one JS loop (`_drive`).
// These tests hold the shape of that protocol and what a run does when its driver
// faults: the runs sharing its fetch go on.
import { describe, expect, it } from 'vitest'
import { ChannelStore } from '@openclaw/context-engine'

const C = 'C07ROLLOUT'
/** 2026-04-10T15:40:00Z */
const T0 = 1775835600000
const ts = (s: number) => `${T0 / 1000 + s}.000100`
const slack = (s: number, text: string, extra: Record<string, unknown> = {}) => ({ type: 'message', ts: ts(s), user: 'U1', text, ...extra })

/** Every `_`-prefixed method along the class's prototype chain. */
function hidden(proto: object | null): string[] {
  const names = new Set<string>()
  for (let p = proto; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) if (name.startsWith('_')) names.add(name)
  }
  return [...names].sort()
}

describe('the fetch protocol', () => {
  it('has one step and one driver; the other hidden methods are the packed path and the save timer', () => {
    expect(hidden(ChannelStore.prototype)).toEqual(['_drive', '_ingestPacked', '_persistTick', '_step'])
  })

  it('a step nobody waits for is refused by name', () => {
    const store = new ChannelStore()
    const step = (store as unknown as { _step(run: number, answer: object): unknown })._step
    expect(() => step.call(store, 7, { id: 3 })).toThrow('no fetch is waiting for effect 3 of run 7')
  })

  it('a clock that throws mid-run rejects that build only; a build sharing its fetch is woken and degrades', async () => {
    let armed = false
    let calls = 0
    const clock = () => {
      if (armed) {
        armed = false
        throw new Error('clock fault')
      }
      return T0 + 60_000
    }
    const store = new ChannelStore({
      clock,
      fetcher: {
        fetchThread: async () => {
          calls++
          // The step that hands this page in reads the clock first: it throws once.
          if (calls === 1) armed = true
          return { ok: true, messages: [slack(20, 'root', { thread_ts: ts(20), reply_count: 1 }), slack(21, 'the reply', { thread_ts: ts(20) })] }
        },
      },
    })
    store.ingestSlackResponse(C, { ok: true, messages: [slack(20, 'root', { thread_ts: ts(20), reply_count: 1 })] })
    const first = store.buildContext(C, ts(20))
    const second = store.buildContext(C, ts(20))
    await expect(first).rejects.toThrow('clock fault')
    // The run that joined the fetch is woken with its end, a failure, and degrades on it
    // with a note instead of waiting for ever.
    const built = await second
    expect(calls).toBe(1)
    expect(built.notes.join('\n')).toMatch(/Could not fetch thread .*clock fault/)
    // The next build fetches the thread afresh.
    const again = await store.buildContext(C, ts(20))
    expect(calls).toBe(2)
    expect(again.thread?.replies.map((r) => r.text)).toEqual(['the reply'])
  })
})
