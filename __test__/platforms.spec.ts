// Discord Gateway dispatches and Telegram updates in the platforms' own shapes (built
// and type-checked in examples/platforms.ts), through the public ChannelStore.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ChannelStore, MemoryStore, tokenEstimate } from '@openclaw/context-engine'
import { thrown } from './helpers'
import { laneOf, placeSession } from '@openclaw/context-engine/openclaw'
import {
  discordMessageCreate,
  discordMessageData,
  discordMessageDelete,
  discordMessageDeleteBulk,
  discordMessageUpdate,
  discordReactionAdd,
  discordThreadCreate,
  discordUser,
  snowflake,
  telegramMessage,
  telegramReaction,
  telegramUpdate,
} from '../examples/platforms'

const T0 = Date.parse('2026-11-20T09:00:00Z')
const GUILD = '1100000000000000001'
const CHANNEL = '1200000000000000001'
const ana = discordUser('1300000000000000001', 'ana')
const bo = discordUser('1300000000000000002', 'bo')
const bot = discordUser('1300000000000000003', 'deploy', true)

describe('ingestDiscordEvent', () => {
  it('reads a message: id as time, nickname, mentions, custom emoji, attachments', async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    const id = snowflake(T0, 7)
    const applied = store.ingestDiscordEvent(
      discordMessageCreate({
        id,
        channelId: CHANNEL,
        guildId: GUILD,
        author: ana,
        nick: 'Ana (ops)',
        content: 'ship it <@1300000000000000002> <:party_parrot:1400000000000000001> by <t:1795683600:R>',
        mentions: [bo],
        attachments: [{ id: '1500000000000000001', filename: 'p99.png', size: 48213, contentType: 'image/png' }],
      }),
    )
    expect(applied).toBe(1)
    const m = store.getMessage(CHANNEL, id)
    expect(m).toMatchObject({
      message_id: id,
      ts: '1795165200.000000007',
      text: 'ship it @BO :party_parrot: by 2026-11-26T09:00:00Z',
      author: { user_id: ana.id, display_name: 'Ana (ops)', is_bot: false },
      media: [{ artifact_id: '1500000000000000001', media_type: 'image/png', filename: 'p99.png', byte_length: 48213 }],
    })
    const ctx = await store.buildContext(CHANNEL, id)
    expect(ctx.apiCalls).toBe(0)
    expect(ctx.snapshot.channel).toEqual({ id: CHANNEL, name: CHANNEL, platform: 'discord' })
    // The millisecond is the snowflake's; the digits after it keep same-millisecond order.
    expect(ctx.snapshot.anchor.ts).toBe('2026-11-20T09:00:00.000000007Z')
  })

  it('holds two messages of the same millisecond apart, in id order', () => {
    const store = new ChannelStore()
    const a = snowflake(T0, 1)
    const b = snowflake(T0, 2)
    store.ingestDiscordEvent(discordMessageCreate({ id: b, channelId: CHANNEL, author: bo, content: 'second' }))
    store.ingestDiscordEvent(discordMessageCreate({ id: a, channelId: CHANNEL, author: ana, content: 'first' }))
    expect(store.getMessage(CHANNEL, a)?.text).toBe('first')
    expect(store.getMessage(CHANNEL, b)?.text).toBe('second')
  })

  it('holds a thread channel as the thread of its parent: the starter message is the root', async () => {
    const store = new ChannelStore({ clock: () => T0 + 600_000 })
    const root = snowflake(T0)
    store.ingestDiscordEvent(discordMessageCreate({ id: root, channelId: CHANNEL, guildId: GUILD, author: ana, content: 'Rollout thread: watch p99 here' }))
    // The thread started from the message has the message's id.
    expect(store.ingestDiscordEvent(discordThreadCreate(root, CHANNEL, GUILD, 'rollout'))).toBe(1)
    const r1 = snowflake(T0 + 10_000)
    const r2 = snowflake(T0 + 20_000)
    store.ingestDiscordEvent(discordMessageCreate({ id: r1, channelId: root, guildId: GUILD, author: bo, content: 'p99 flat so far' }))
    store.ingestDiscordEvent(discordMessageCreate({ id: r2, channelId: root, guildId: GUILD, author: bot, content: 'canary at 25%' }))
    expect(store.getMessage(CHANNEL, r1)).toMatchObject({ thread_id: root })
    const ctx = await store.buildContext(CHANNEL, r2)
    expect(ctx.apiCalls).toBe(0)
    expect(ctx.thread?.root.text).toBe('Rollout thread: watch p99 here')
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['p99 flat so far', 'canary at 25%'])
    // A thread is not a channel of its own.
    expect(store.getMessage(root, r1)).toBeNull()
  })

  it('a forum post: the first message has the post id and is the root', async () => {
    const store = new ChannelStore({ clock: () => T0 + 600_000 })
    const forum = '1200000000000000009'
    const post = snowflake(T0)
    store.ingestDiscordEvent(discordThreadCreate(post, forum, GUILD, 'Bug: login loop'))
    store.ingestDiscordEvent(discordMessageCreate({ id: post, channelId: post, guildId: GUILD, author: ana, content: 'Login loops after SSO' }))
    const reply = snowflake(T0 + 5_000)
    store.ingestDiscordEvent(discordMessageCreate({ id: reply, channelId: post, guildId: GUILD, author: bo, content: 'repro on Safari' }))
    expect(store.getMessage(forum, post)).toMatchObject({ thread_id: null })
    const ctx = await store.buildContext(forum, reply)
    expect(ctx.thread?.root.text).toBe('Login loops after SSO')
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['repro on Safari'])
  })

  it('a reply keeps the id it answers, and holds the referenced message the event carries', () => {
    const store = new ChannelStore()
    const asked = snowflake(T0)
    const answer = snowflake(T0 + 1_000)
    const referenced = discordMessageData({ id: asked, channelId: CHANNEL, author: ana, content: 'which region failed?' })
    expect(store.ingestDiscordEvent(discordMessageCreate({ id: answer, channelId: CHANNEL, author: bo, content: 'eu-west', replyTo: { messageId: asked, referenced } }))).toBe(2)
    expect(store.getMessage(CHANNEL, asked)?.text).toBe('which region failed?')
    // Without the referenced message (Discord leaves it out at times), the reply still says what it answers.
    const later = snowflake(T0 + 2_000)
    expect(store.ingestDiscordEvent(discordMessageCreate({ id: later, channelId: CHANNEL, author: ana, content: 'thanks', replyTo: { messageId: answer } }))).toBe(1)
  })

  it('edits, deletions (one and bulk), reactions by name, in the thread too', () => {
    const store = new ChannelStore()
    const root = snowflake(T0)
    const a = snowflake(T0 + 1_000)
    const b = snowflake(T0 + 2_000)
    store.ingestDiscordEvent(discordMessageCreate({ id: root, channelId: CHANNEL, author: ana, content: 'root' }))
    store.ingestDiscordEvent(discordThreadCreate(root, CHANNEL, GUILD, 't'))
    store.ingestDiscordEvent(discordMessageCreate({ id: a, channelId: CHANNEL, author: ana, content: 'typo' }))
    store.ingestDiscordEvent(discordMessageCreate({ id: b, channelId: root, author: bo, content: 'in thread' }))
    expect(store.ingestDiscordEvent(discordMessageUpdate({ id: a, channelId: CHANNEL, author: ana, content: 'fixed' }, new Date(T0 + 3_000).toISOString()))).toBe(1)
    expect(store.getMessage(CHANNEL, a)).toMatchObject({ text: 'fixed', edited: true })
    expect(store.ingestDiscordEvent(discordReactionAdd(CHANNEL, root, bo.id, { id: '1400000000000000001', name: 'party_parrot' }))).toBe(1)
    expect(store.ingestDiscordEvent(discordReactionAdd(CHANNEL, root, ana.id, { id: null, name: '👍' }))).toBe(1)
    expect(store.getMessage(CHANNEL, root)?.reactions.map((r) => r.name)).toEqual(['party_parrot', '👍'])
    expect(store.ingestDiscordEvent(discordMessageDelete(root, b))).toBe(1)
    expect(store.getMessage(CHANNEL, b)).toBeNull()
    expect(store.ingestDiscordEvent(discordMessageDeleteBulk(CHANNEL, [a, root]))).toBe(2)
    expect(store.getMessage(CHANNEL, a)).toBeNull()
    expect(store.getMessage(CHANNEL, root)).toBeNull()
  })

  it('counts and ignores dispatches it has no use for, and joins/pins', () => {
    const store = new ChannelStore()
    expect(store.ingestDiscordEvent({ op: 0, t: 'TYPING_START', s: 9, d: { channel_id: CHANNEL, user_id: ana.id, timestamp: 1 } })).toBe(0)
    expect(store.ingestDiscordEvent({ op: 11, d: null })).toBe(0)
    const join = { ...discordMessageCreate({ id: snowflake(T0), channelId: CHANNEL, author: ana, content: '' }) }
    join.d = { ...join.d, type: 7 }
    expect(store.ingestDiscordEvent(join)).toBe(0)
    expect(store.stats().ignoredEvents).toBe(3)
  })

  it('names the field of a dispatch it cannot read', () => {
    const store = new ChannelStore()
    const e = thrown(() => store.ingestDiscordEvent({ op: 0, t: 'MESSAGE_CREATE', d: { id: 'not-a-snowflake', channel_id: CHANNEL, author: ana, content: 'x' } }))
    expect(e).toMatchObject({ name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', path: 'payload.d.id' })
    expect(e.message).toMatch(/^ChannelStore\.ingestDiscordEvent: payload\.d\.id: expected a snowflake/)
    const noAuthor = thrown(() => store.ingestDiscordEvent({ t: 'MESSAGE_CREATE', d: { id: snowflake(T0), channel_id: CHANNEL, content: 'x' } }))
    expect(noAuthor).toMatchObject({ path: 'payload.d.author' })
    expect(thrown(() => store.ingestDiscordEvent({ t: 'MESSAGE_DELETE_BULK', d: { channel_id: CHANNEL, ids: [1] } }))).toMatchObject({ path: 'payload.d.ids[0]' })
    expect(store.stats().ingestedEvents).toBe(0)
  })
})

describe('the quoted reply', () => {
  it('shows the message a Discord reply answers apart from the anchor, fetched once when the event lacks it', async () => {
    const asked = snowflake(T0)
    const answer = snowflake(T0 + 60_000)
    const calls: string[] = []
    const store = new ChannelStore({
      clock: () => T0 + 120_000,
      fetcher: {
        // GET /channels/{channelId}/messages/{id}: one message, as Discord returns it.
        fetchMessages: async (req) => {
          calls.push(req.messageIds.join(','))
          return discordMessageData({ id: asked, channelId: req.channelId, author: ana, content: 'which region failed? the dashboard is red' })
        },
      },
    })
    store.ingestDiscordEvent(discordMessageCreate({ id: answer, channelId: CHANNEL, guildId: GUILD, author: bo, content: 'eu-west, since 09:00', replyTo: { messageId: asked } }))
    const ctx = await store.buildContext(CHANNEL, answer, { adjacent: 0 })
    expect(calls).toEqual([asked])
    expect(ctx.apiCalls).toBe(1)
    expect(ctx.quotedReply).toEqual({
      message_id: asked,
      ts: '2026-11-20T09:00:00.000000000Z',
      author: { user_id: ana.id, display_name: 'ANA', is_bot: false },
      text: 'which region failed? the dashboard is red',
      quote: null,
      deleted: false,
    })
    // Labelled apart, after the documents; the anchor's own text is untouched.
    const section = ctx.promptSection
    const block = section.slice(section.indexOf('<quoted_reply>'))
    expect(block).toMatch(/^<quoted_reply>\nThe message you're responding to replies to the message below: context its author pointed at, not their own words\.\n- \d+ 2026-11-20T09:00:00\.000000000Z ANA \(1300000000000000001\): which region failed\? the dashboard is red\n<\/quoted_reply>$/)
    expect(ctx.snapshot.anchor.text).toBe('eu-west, since 09:00')
    expect(ctx.tokens.quotedReply).toBeGreaterThan(0)
    expect(ctx.tokens.total).toBe(tokenEstimate(ctx.promptSection).upperBound)
    expect(ctx.toJSON().quotedReply).toEqual(ctx.quotedReply)
    // Held now: the next build makes no call.
    const again = await store.buildContext(CHANNEL, answer, { adjacent: 0 })
    expect(again.apiCalls).toBe(0)
    expect(again.quotedReply?.text).toBe('which region failed? the dashboard is red')
  })

  it('says so when the message replied to cannot be fetched, and a message that replies to nothing has none', async () => {
    const store = new ChannelStore({ clock: () => T0 + 120_000 })
    const lone = snowflake(T0)
    const reply = snowflake(T0 + 1_000)
    store.ingestDiscordEvent(discordMessageCreate({ id: lone, channelId: CHANNEL, author: ana, content: 'hello' }))
    store.ingestDiscordEvent(discordMessageCreate({ id: reply, channelId: CHANNEL, author: bo, content: 'hi', replyTo: { messageId: '1573261620000000099' } }))
    const none = await store.buildContext(CHANNEL, lone)
    expect(none.quotedReply).toBeNull()
    expect(none.promptSection).not.toContain('<quoted_reply>')
    expect(none.tokens.quotedReply).toBe(0)
    const missing = await store.buildContext(CHANNEL, reply)
    expect(missing.quotedReply).toMatchObject({ message_id: '1573261620000000099', text: null })
    expect(missing.notes).toContain('The message 1573261620000000099 the anchor replies to is not held.')
    expect(missing.notes.some((n) => n.includes('no fetchMessages in the fetcher'))).toBe(true)
  })

  it('a Telegram reply shows the message it answers and the part quoted', async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    const q = telegramMessage({ chatId: -100, messageId: 10, date: Math.floor(T0 / 1000), from: { id: 1, firstName: 'Ann' }, text: 'deploy eu-west and us-east at noon' })
    const a = telegramMessage({ chatId: -100, messageId: 11, date: Math.floor(T0 / 1000) + 5, from: { id: 2, firstName: 'Ben' }, text: 'why not earlier?', replyTo: q as never, quote: 'at noon' })
    store.ingestTelegramUpdate(telegramUpdate(1, a))
    const ctx = await store.buildContext('-100', '11')
    expect(ctx.apiCalls).toBe(0)
    expect(ctx.quotedReply).toMatchObject({ message_id: '10', text: 'deploy eu-west and us-east at noon', quote: 'at noon', author: { display_name: 'Ann' } })
    expect(ctx.promptSection).toContain('  quoted part: "at noon"\n</quoted_reply>')
  })
})

describe('a Discord fetcher', () => {
  it('pages a thread with before= ids and takes the root from the thread starter message', async () => {
    const root = snowflake(T0)
    const replies = Array.from({ length: 5 }, (_, i) => discordMessageData({ id: snowflake(T0 + (i + 1) * 1_000), channelId: root, author: i % 2 ? ana : bo, content: `reply ${i + 1}` }))
    const starter = { ...discordMessageData({ id: snowflake(T0 + 500), channelId: root, author: ana, content: '' }), type: 21, referenced_message: discordMessageData({ id: root, channelId: CHANNEL, author: ana, content: 'Rollout thread' }) }
    // Newest first, as GET /channels/{id}/messages returns them.
    const all = [...replies].reverse().concat([starter as never])
    const asked: Array<string | undefined> = []
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      rateLimit: { pageSize: 3 },
      fetcher: {
        fetchThread: async (req) => {
          asked.push(req.cursor ?? undefined)
          const from = req.cursor ? all.findIndex((m) => m.id === req.cursor) + 1 : 0
          return all.slice(from, from + req.limit)
        },
      },
    })
    store.ingestDiscordEvent(discordThreadCreate(root, CHANNEL, GUILD, 'rollout'))
    const ctx = await store.buildContext(CHANNEL, snowflake(T0 + 5_000), { threadId: root, adjacent: 0 })
    expect(asked).toEqual([undefined, replies[2].id])
    expect(ctx.thread?.root.text).toBe('Rollout thread')
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['reply 1', 'reply 2', 'reply 3', 'reply 4', 'reply 5'])
    expect(ctx.snapshot.channel.platform).toBe('discord')
  })

  it('an edit or a deletion that arrives while a fetch is in flight wins over the fetched page', async () => {
    const kept = snowflake(T0)
    const edited = snowflake(T0 + 1_000)
    const deleted = snowflake(T0 + 2_000)
    const anchor = snowflake(T0 + 3_000)
    let answer: (page: unknown) => void = () => {}
    const store = new ChannelStore({
      clock: () => T0 + 60_000,
      fetcher: { fetchHistory: () => new Promise((resolve) => (answer = resolve)) },
    })
    store.ingestDiscordEvent(discordMessageCreate({ id: anchor, channelId: CHANNEL, guildId: GUILD, author: ana, content: 'what changed?' }))
    const building = store.buildContext(CHANNEL, anchor, { adjacent: 5 })
    await new Promise((r) => setImmediate(r))
    // While the history page is on its way: one message edited, one deleted.
    store.ingestDiscordEvent(discordMessageUpdate({ id: edited, channelId: CHANNEL, author: bo, content: 'v2 (edited)' }, new Date(T0 + 50_000).toISOString()))
    store.ingestDiscordEvent(discordMessageDelete(CHANNEL, deleted))
    // The page was read before: it has the old text and the deleted message.
    answer([anchor, deleted, edited, kept].map((id, i) => discordMessageData({ id, channelId: CHANNEL, author: i % 2 ? bo : ana, content: id === edited ? 'v1' : `message ${i}` })))
    const ctx = await building
    expect(ctx.apiCalls).toBe(1)
    const texts = ctx.snapshot.adjacent.map((a) => [a.message_id, a.snippet])
    expect(texts).toEqual([
      [kept, 'message 3'],
      [edited, 'v2 (edited)'],
    ])
    expect(store.getMessage(CHANNEL, deleted)).toBeNull()
  })

  it('a 429 with a float retry_after pauses the method like a Slack Retry-After', async () => {
    let calls = 0
    const store = new ChannelStore({
      clock: () => T0,
      rateLimit: { overflowStrategy: 'degrade' },
      fetcher: {
        fetchHistory: async () => {
          calls++
          throw Object.assign(new Error('You are being rate limited.'), { rawError: { message: 'You are being rate limited.', retry_after: 1.5, global: false }, status: 429 })
        },
      },
    })
    store.ingestDiscordEvent(discordMessageCreate({ id: snowflake(T0), channelId: CHANNEL, guildId: GUILD, author: ana, content: 'hi' }))
    const first = await store.buildContext(CHANNEL, snowflake(T0), { adjacent: 5 })
    expect(first.notes.join(' ')).toMatch(/paused for 2s \(Retry-After\)/)
    // Counted and named as Discord's route, not Slack's method.
    expect(first.notes.join(' ')).toContain('GET /channels/{id}/messages failed: You are being rate limited.')
    expect(store.stats().calls).toEqual({ 'GET /channels/{id}/messages': 1 })
    const second = await store.buildContext(CHANNEL, snowflake(T0), { adjacent: 5 })
    expect(calls).toBe(1)
    expect(second.notes.join(' ')).toMatch(/Retry-After/)
  })
})

const CHAT = -1001234567890
const date = Math.floor(T0 / 1000)
const ann = { id: 111, firstName: 'Ann', lastName: 'Lee' }
const ben = { id: 222, firstName: 'Ben' }

describe('ingestTelegramUpdate', () => {
  it('reads a message: chat as channel, whole-second dates ordered by id, photo by file_id', async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    const first = telegramMessage({ chatId: CHAT, chatTitle: 'Ops', messageId: 41, date, from: ann, text: 'deploy at 5%' })
    const second = telegramMessage({ chatId: CHAT, chatTitle: 'Ops', messageId: 42, date, from: ben, text: 'graph', photo: [{ fileId: 'small', width: 90, height: 90, size: 1_000 }, { fileId: 'AgACAgQAAxkBAAIB', width: 1280, height: 960, size: 98_304 }] })
    expect(store.ingestTelegramUpdate(telegramUpdate(1, first))).toBe(1)
    expect(store.ingestTelegramUpdate(telegramUpdate(2, second))).toBe(1)
    const ch = String(CHAT)
    expect(store.getMessage(ch, '41')).toMatchObject({ text: 'deploy at 5%', author: { user_id: '111', display_name: 'Ann Lee' } })
    expect(store.getMessage(ch, '42')?.media).toEqual([{ artifact_id: 'AgACAgQAAxkBAAIB', media_type: 'image/jpeg', filename: null, byte_length: 98_304 }])
    const ctx = await store.buildContext(ch, '42')
    expect(ctx.snapshot.channel).toEqual({ id: ch, name: 'Ops', platform: 'telegram' })
    expect(ctx.snapshot.adjacent.map((a) => a.message_id)).toEqual(['41'])
  })

  it('a forum topic is a thread rooted at its first message; the General topic (1) is the chat', async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    const ch = String(CHAT)
    const created = telegramMessage({ chatId: CHAT, forum: true, messageId: 500, date, from: ann, topicId: 500, topicCreated: 'Releases' })
    store.ingestTelegramUpdate(telegramUpdate(1, created))
    // Telegram sets a topic message's reply_to_message to the topic's first message.
    const inTopic = telegramMessage({ chatId: CHAT, forum: true, messageId: 501, date: date + 5, from: ben, topicId: 500, text: 'v2.3 is out', replyTo: created as never })
    store.ingestTelegramUpdate(telegramUpdate(2, inTopic))
    const general = telegramMessage({ chatId: CHAT, forum: true, messageId: 502, date: date + 6, from: ann, topicId: 1, text: 'lunch?' })
    store.ingestTelegramUpdate(telegramUpdate(3, general))
    expect(store.getMessage(ch, '501')).toMatchObject({ thread_id: '500', broadcast: false })
    expect(store.getMessage(ch, '502')).toMatchObject({ thread_id: null })
    const ctx = await store.buildContext(ch, '501')
    expect(ctx.thread?.root.text).toBe('[topic created: Releases]')
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['v2.3 is out'])
    // A topic's messages are not the chat's: the General topic's is.
    const top = await store.buildContext(ch, '502')
    expect(top.snapshot.adjacent.map((a) => a.message_id)).toEqual(['500'])
  })

  it('a reply chain is one thread rooted where it started, shown in the chat too', async () => {
    const store = new ChannelStore({ clock: () => T0 + 60_000 })
    const ch = String(CHAT)
    const q = telegramMessage({ chatId: CHAT, messageId: 10, date, from: ann, text: 'which region failed?' })
    const a1 = telegramMessage({ chatId: CHAT, messageId: 11, date: date + 1, from: ben, text: 'eu-west', replyTo: q as never })
    const a2 = telegramMessage({ chatId: CHAT, messageId: 12, date: date + 2, from: ann, text: 'since when?', replyTo: a1 as never, quote: 'eu' })
    // The question reaches the store only inside the first reply.
    expect(store.ingestTelegramUpdate(telegramUpdate(1, a1))).toBe(2)
    store.ingestTelegramUpdate(telegramUpdate(2, a2))
    expect(store.getMessage(ch, '10')).toMatchObject({ text: 'which region failed?', thread_id: null })
    expect(store.getMessage(ch, '11')).toMatchObject({ thread_id: '10', broadcast: true })
    expect(store.getMessage(ch, '12')).toMatchObject({ thread_id: '10', broadcast: true })
    const ctx = await store.buildContext(ch, '12')
    expect(ctx.thread?.root.text).toBe('which region failed?')
    expect(ctx.thread?.replies.map((r) => r.text)).toEqual(['eu-west', 'since when?'])
  })

  it('edits and reactions; other updates and service messages are counted and ignored', () => {
    const store = new ChannelStore()
    const ch = String(CHAT)
    const m = telegramMessage({ chatId: CHAT, messageId: 7, date, from: ann, text: 'tpyo' })
    store.ingestTelegramUpdate(telegramUpdate(1, m))
    expect(store.ingestTelegramUpdate(telegramUpdate(2, { ...m, text: 'typo', edit_date: date + 9 } as never, 'edited_message'))).toBe(1)
    expect(store.getMessage(ch, '7')).toMatchObject({ text: 'typo', edited: true })
    expect(store.ingestTelegramUpdate(telegramReaction(3, CHAT, 7, 222, date + 10, [], ['👍', '🔥']))).toBe(2)
    expect(store.ingestTelegramUpdate(telegramReaction(4, CHAT, 7, 222, date + 11, ['👍', '🔥'], ['🔥']))).toBe(1)
    expect(store.getMessage(ch, '7')?.reactions).toEqual([{ name: '🔥', count: 1, users: ['222'] }])
    expect(store.ingestTelegramUpdate({ update_id: 5, callback_query: { id: 'q', from: { id: 1, is_bot: false, first_name: 'x' }, chat_instance: 'c' } })).toBe(0)
    const joined = { ...telegramMessage({ chatId: CHAT, messageId: 8, date, from: ben }), new_chat_members: [{ id: 222, is_bot: false, first_name: 'Ben' }] }
    expect(store.ingestTelegramUpdate(telegramUpdate(6, joined as never))).toBe(0)
    expect(store.stats().ignoredEvents).toBe(2)
  })

  it('a restart keeps what the store saw: the saved file is Telegram\'s history', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'telegram-')), 'state.sqlite')
    const ch = String(CHAT)
    const q = telegramMessage({ chatId: CHAT, chatTitle: 'Ops', messageId: 10, date, from: ann, text: 'which region failed?' })
    const a = telegramMessage({ chatId: CHAT, chatTitle: 'Ops', messageId: 11, date: date + 5, from: ben, text: 'eu-west', replyTo: q as never, quote: 'region' })
    const before = new ChannelStore({ clock: () => T0 + 60_000, persist: { path: file } })
    before.ingestTelegramUpdate(telegramUpdate(1, a))
    await before.flush()
    await before.close()
    const after = new ChannelStore({ clock: () => T0 + 120_000, persist: { path: file } })
    const ctx = await after.buildContext(ch, '11')
    expect(ctx.snapshot.channel).toEqual({ id: ch, name: 'Ops', platform: 'telegram' })
    expect(ctx.thread?.root.text).toBe('which region failed?')
    expect(ctx.quotedReply).toMatchObject({ message_id: '10', quote: 'region' })
    expect(after.laneOf(ch, '11')).toBe(`reply:${ch}:10`)
    await after.close()
  })

  it('names the field of an update it cannot read', () => {
    const store = new ChannelStore()
    const e = thrown(() => store.ingestTelegramUpdate({ update_id: 1, message: { message_id: 1, date, chat: { id: 'x', type: 'group' }, text: 'hi' } }))
    expect(e).toMatchObject({ name: 'TypeError', path: 'update.message.chat.id' })
    expect(e.message).toMatch(/^ChannelStore\.ingestTelegramUpdate: update\.message\.chat\.id: expected a number, got string/)
    expect(thrown(() => store.ingestTelegramUpdate([] as never))).toMatchObject({ path: 'update' })
  })
})

describe('lanes', () => {
  it('a message gets the lane MemoryStore and OpenClaw session keys give it, on every platform', () => {
    const store = new ChannelStore()
    // Discord: a thread of a channel.
    const root = snowflake(T0)
    const inThread = snowflake(T0 + 1_000)
    store.ingestDiscordEvent(discordMessageCreate({ id: root, channelId: CHANNEL, guildId: GUILD, author: ana, content: 'root' }))
    store.ingestDiscordEvent(discordThreadCreate(root, CHANNEL, GUILD, 't'))
    store.ingestDiscordEvent(discordMessageCreate({ id: inThread, channelId: root, guildId: GUILD, author: bo, content: 'in thread' }))
    const discordKey = `agent:main:discord:channel:${CHANNEL}:thread:${root}`
    expect(store.laneOf(CHANNEL, inThread)).toBe(laneOf(placeSession(discordKey, 's')))
    expect(store.laneOf(CHANNEL, root)).toBe(laneOf(placeSession(`agent:main:discord:channel:${CHANNEL}`, 's')))
    // Telegram: a forum topic, the General topic, a reply chain.
    const chat = -1009
    const d = Math.floor(T0 / 1000)
    const created = telegramMessage({ chatId: chat, forum: true, messageId: 5, date: d, from: ann, topicId: 5, topicCreated: 'Releases' })
    store.ingestTelegramUpdate(telegramUpdate(1, created))
    store.ingestTelegramUpdate(telegramUpdate(2, telegramMessage({ chatId: chat, forum: true, messageId: 6, date: d, from: ben, topicId: 5, text: 'v2', replyTo: created as never })))
    store.ingestTelegramUpdate(telegramUpdate(3, telegramMessage({ chatId: chat, forum: true, messageId: 7, date: d, from: ann, topicId: 1, text: 'general' })))
    const q = telegramMessage({ chatId: chat, forum: true, messageId: 8, date: d, from: ann, text: 'q' })
    store.ingestTelegramUpdate(telegramUpdate(4, telegramMessage({ chatId: chat, forum: true, messageId: 9, date: d, from: ben, text: 'a', replyTo: q as never })))
    const tg = `agent:main:telegram:group:${chat}`
    expect(store.laneOf(String(chat), '6')).toBe(laneOf(placeSession(`${tg}:topic:5`, 's')))
    expect(store.laneOf(String(chat), '7')).toBe(laneOf(placeSession(`${tg}:topic:1`, 's')))
    expect(store.laneOf(String(chat), '9')).toBe('reply:-1009:8')
    // MemoryStore files the same Telegram messages (topic by message_thread_id, reply by
    // reply_to_message) in the same lanes.
    const memory = new MemoryStore()
    const base = { sessionId: `telegram:chat:${chat}`, chatId: String(chat), role: 'user' as const, ts: T0 }
    const filed = memory.ingest([
      { ...base, messageId: '8', text: 'q' },
      { ...base, messageId: '6', text: 'v2', topicId: '5' },
      { ...base, messageId: '9', text: 'a', replyTo: '8' },
    ])
    expect(filed.map((f) => f.threadKey)).toEqual([store.laneOf(String(chat), '8'), store.laneOf(String(chat), '6'), store.laneOf(String(chat), '9')])
    memory.close()
    // Slack: a thread is the reply chain of its root.
    store.ingestSlackEvent({ type: 'message', channel: 'C1', user: 'U1', text: 'r', ts: '1775835600.000100', thread_ts: '1775835500.000100' })
    expect(store.laneOf('C1', '1775835600.000100')).toBe(laneOf(placeSession('agent:main:slack:channel:c1:thread:1775835500.000100', 's')).replace('c1', 'C1'))
    expect(store.laneOf('C1', 'nope')).toBeNull()
  })
})

describe('batches', () => {
  it('ingestDiscordEvents: a thread opened in the batch places the later messages; a bad one applies nothing', () => {
    const store = new ChannelStore()
    const root = snowflake(T0)
    const reply = snowflake(T0 + 1_000)
    const batch = [
      discordMessageCreate({ id: root, channelId: CHANNEL, guildId: GUILD, author: ana, content: 'root' }),
      discordThreadCreate(root, CHANNEL, GUILD, 't'),
      discordMessageCreate({ id: reply, channelId: root, guildId: GUILD, author: bo, content: 'in thread' }),
      { op: 0, t: 'TYPING_START', d: {} },
    ]
    const bad = [...batch, { t: 'MESSAGE_CREATE', d: { id: 'x', channel_id: CHANNEL, author: ana, content: '' } }]
    const e = thrown(() => store.ingestDiscordEvents(bad))
    expect(e).toMatchObject({ name: 'TypeError', path: 'payloads[4].d.id' })
    expect(e.message).toMatch(/^ChannelStore\.ingestDiscordEvents: payloads\[4\]\.d\.id: expected a snowflake/)
    expect(store.stats().ingestedEvents).toBe(0)
    expect(store.getMessage(CHANNEL, root)).toBeNull()
    expect(store.ingestDiscordEvents(batch)).toBe(3)
    expect(store.getMessage(CHANNEL, reply)).toMatchObject({ thread_id: root })
    expect(store.stats().ignoredEvents).toBe(1)
    expect(thrown(() => store.ingestDiscordEvents({} as never))).toMatchObject({ path: 'payloads' })
  })

  it('ingestTelegramUpdates: what getUpdates returns, a reply to a reply of the batch stays in its chain', () => {
    const store = new ChannelStore()
    const ch = String(CHAT)
    const q = telegramMessage({ chatId: CHAT, messageId: 20, date, from: ann, text: 'q' })
    const a1 = telegramMessage({ chatId: CHAT, messageId: 21, date: date + 1, from: ben, text: 'a1', replyTo: q as never })
    const a2 = telegramMessage({ chatId: CHAT, messageId: 22, date: date + 2, from: ann, text: 'a2', replyTo: a1 as never })
    expect(store.ingestTelegramUpdates([telegramUpdate(1, a1), telegramUpdate(2, a2)])).toBe(4)
    expect(store.getMessage(ch, '22')).toMatchObject({ thread_id: '20' })
    expect(store.laneOf(ch, '22')).toBe(`reply:${ch}:20`)
    const e = thrown(() => store.ingestTelegramUpdates([telegramUpdate(3, q), { update_id: 4, message: { message_id: 'x' } }]))
    expect(e).toMatchObject({ path: 'updates[1].message.chat' })
    expect(e.message).toMatch(/^ChannelStore\.ingestTelegramUpdates: updates\[1\]\.message\.chat: is required/)
  })
})
