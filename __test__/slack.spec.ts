// Slack payloads exactly as Slack sends them, through ingestSlackEvent and the fetcher.
import { describe, expect, it } from 'vitest'
import { ChannelStore } from '@openclaw/context-engine'
import { thrown } from './helpers'

const C = 'C07ROLLOUT'
const envelope = (event: Record<string, unknown>) => ({
  token: 'XXYYZZ',
  team_id: 'T024BE7LD',
  api_app_id: 'A0KRD7HC3',
  event,
  type: 'event_callback',
  event_id: 'Ev08MFMKH6',
  event_time: 1775835612,
  authorizations: [{ enterprise_id: null, team_id: 'T024BE7LD', user_id: 'U0BOTUSER', is_bot: true, is_enterprise_install: false }],
})

describe('ingestSlackEvent', () => {
  it('follows a conversation: messages, a bot, a thread, a broadcast, a file, an edit, a deletion, reactions', async () => {
    const store = new ChannelStore({ clock: () => 1775835800000 })
    store.setUsers([{ userId: 'U0H3KD2QP', displayName: 'Jonas' }])
    const payloads = [
      { type: 'message', channel: C, user: 'U061F7AUR', text: 'Starting the canary at 5%', ts: '1775835612.000200', channel_type: 'channel', user_profile: { display_name: 'Sam Rivera', real_name: 'Samuel Rivera' } },
      { type: 'message', subtype: 'bot_message', channel: C, text: 'Deploy #4121 to canary: succeeded', ts: '1775835620.000300', bot_id: 'B01DEPLOYBOT', username: 'deploy-bot' },
      { type: 'message', channel: C, user: 'U061F7AUR', text: 'Rollout thread: watch p99 here', ts: '1775835630.000400' },
      { type: 'message', channel: C, user: 'U0H3KD2QP', text: 'p99 flat so far', ts: '1775835640.000500', thread_ts: '1775835630.000400', parent_user_id: 'U061F7AUR' },
      { type: 'message', subtype: 'thread_broadcast', channel: C, user: 'U0H3KD2QP', text: 'Promoting to 25%', ts: '1775835650.000600', thread_ts: '1775835630.000400', root: { ts: '1775835630.000400', text: 'Rollout thread: watch p99 here', user: 'U061F7AUR' } },
      { type: 'message', subtype: 'file_share', channel: C, user: 'U061F7AUR', text: 'graph', ts: '1775835660.000700', upload: true, files: [{ id: 'F07SCREEN01', name: 'canary-p99.png', mimetype: 'image/png', filetype: 'png', size: 48213, mode: 'hosted', url_private: 'https://files.slack.com/files-pri/T024BE7LD-F07SCREEN01/canary-p99.png' }] },
      { type: 'message', subtype: 'message_changed', hidden: true, channel: C, ts: '1775835700.000900', message: { type: 'message', user: 'U061F7AUR', text: 'Starting the canary at 10%', ts: '1775835612.000200', edited: { user: 'U061F7AUR', ts: '1775835700.000000' } }, previous_message: { type: 'message', user: 'U061F7AUR', text: 'Starting the canary at 5%', ts: '1775835612.000200' } },
      { type: 'message', subtype: 'message_deleted', hidden: true, channel: C, ts: '1775835710.001000', deleted_ts: '1775835620.000300', previous_message: { type: 'message', subtype: 'bot_message', text: 'Deploy #4121', ts: '1775835620.000300', bot_id: 'B01DEPLOYBOT' } },
      { type: 'reaction_added', user: 'U0G9QF9C6', reaction: 'eyes', item_user: 'U061F7AUR', item: { type: 'message', channel: C, ts: '1775835630.000400' }, event_ts: '1775835720.001100' },
      { type: 'reaction_added', user: 'U0H3KD2QP', reaction: 'white_check_mark', item_user: 'U061F7AUR', item: { type: 'message', channel: C, ts: '1775835630.000400' }, event_ts: '1775835721.001200' },
      { type: 'reaction_removed', user: 'U0G9QF9C6', reaction: 'eyes', item_user: 'U061F7AUR', item: { type: 'message', channel: C, ts: '1775835630.000400' }, event_ts: '1775835730.001300' },
      { type: 'message', subtype: 'channel_join', channel: C, user: 'U0H3KD2QP', text: '<@U0H3KD2QP> has joined the channel', ts: '1775835740.001400' },
    ]
    const applied = payloads.map((p) => store.ingestSlackEvent(envelope(p)))
    expect(applied).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0])
    expect(store.ingestSlackEvent({ token: 'x', challenge: 'abc', type: 'url_verification' })).toBe(0)
    expect(store.stats().ignoredEvents).toBe(2)

    const edited = store.getMessage(C, '1775835612.000200')
    expect(edited).toMatchObject({ text: 'Starting the canary at 10%', edited: true, author: { display_name: 'Sam Rivera' } })
    expect(store.getMessage(C, '1775835620.000300')).toBeNull()
    expect(store.getMessage(C, '1775835630.000400')).toMatchObject({ reply_count: 2, reactions: [{ name: 'white_check_mark', count: 1, users: ['U0H3KD2QP'] }] })
    expect(store.getMessage(C, '1775835650.000600')).toMatchObject({ broadcast: true, thread_id: '1775835630.000400', author: { display_name: 'Jonas' } })
    expect(store.getMessage(C, '1775835660.000700')?.media).toEqual([{ artifact_id: 'F07SCREEN01', media_type: 'image/png', filename: 'canary-p99.png', byte_length: 48213 }])

    const ctx = await store.buildContext(C, '1775835650.000600', { adjacent: 10 })
    expect(ctx.apiCalls).toBe(0)
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['p99 flat so far', 'Promoting to 25%'])
    const ids = ctx.snapshot.adjacent.map((a) => a.message_id)
    expect(ids).not.toContain('1775835620.000300')
    const root = ctx.snapshot.adjacent.find((a) => a.message_id === '1775835630.000400')
    expect(root?.thread_activity).toEqual({ reply_count: 2, replies_last_1h: 2, last_reply_ts: '2026-04-10T15:40:50.000600Z' })
    expect(root?.reactions).toEqual([':white_check_mark: 1'])
  })

  it('names the field of a payload it cannot read', () => {
    const store = new ChannelStore()
    const e = thrown(() => store.ingestSlackEvent(envelope({ type: 'message', channel: C, text: 'no ts' })))
    expect(e).toBeInstanceOf(TypeError)
    expect(e.message).toBe('ChannelStore.ingestSlackEvent: payload.event.ts: is required')
    expect(() => store.ingestSlackEvent('nope' as never)).toThrow(TypeError)
  })
})

describe('fetchMessages', () => {
  it('finds an anchor the store never saw, by id, after the history page did not have it', async () => {
    const requests: unknown[] = []
    const store = new ChannelStore({
      fetcher: {
        fetchHistory: async () => ({ ok: true, messages: [{ type: 'message', user: 'U1', text: 'newest', ts: '1775835900.000100' }], has_more: false }),
        fetchMessages: async (req) => {
          requests.push(req)
          return { ok: true, messages: [{ type: 'message', user: 'U1', text: 'an old question', ts: '1775000000.000100' }] }
        },
      },
    })
    const ctx = await store.buildContext(C, '1775000000.000100')
    expect(requests).toEqual([{ channelId: C, messageIds: ['1775000000.000100'], limit: 200 }])
    expect(ctx.apiCalls).toBe(2)
    expect(ctx.snapshot.anchor.text).toBe('an old question')
    expect(store.stats().calls).toEqual({ 'conversations.history': 2 })
  })
})
