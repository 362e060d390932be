// Builders for realistic inputs, shared by the suites.
import type { MessageInput, ChannelSnapshotInput, ThreadInput } from '@openclaw/context-engine'

let counter = 0

/** A Slack-style message; `ts` doubles as the message id, as on Slack. */
export function msg(ts: string, text: string, extra: Partial<MessageInput> = {}): MessageInput {
  counter += 1
  return {
    ts,
    text,
    author: { userId: `U0${counter % 7}`, displayName: ['Sam', 'Priya', 'Jonas', 'Aiko', 'Lucía', 'Omar', 'Deploy Bot'][counter % 7] },
    ...extra,
  }
}

/** A Slack ts `seconds` after a fixed start (2026-04-10T20:30:00Z). */
export function ts(seconds: number, micros = 0): string {
  return `${1775853000 + seconds}.${String(micros).padStart(6, '0')}`
}

export function snapshotInput(adjacentCount = 5, anchorText = 'Can someone check the deploy?'): ChannelSnapshotInput {
  const adjacentMessages = Array.from({ length: adjacentCount }, (_, i) => msg(ts(i * 60), `message number ${i}`))
  return {
    channel: { id: 'C0123', name: 'platform-eng', platform: 'slack' },
    anchor: msg(ts(adjacentCount * 60 + 30), anchorText),
    adjacentMessages,
  }
}

export function threadInput(replyTexts: string[], extra: Partial<ThreadInput> = {}): ThreadInput {
  return {
    root: msg(ts(0), 'Incident: checkout latency is up'),
    replies: replyTexts.map((t, i) => msg(ts(10 + i), t, { threadId: ts(0) })),
    ...extra,
  }
}

/** The error a call throws, so a test can assert on its class and message. */
export function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (e) {
    return e as Error
  }
  throw new Error('expected the call to throw')
}
