// The quoted-reply layer in the OpenClaw engine: a Discord turn whose user message names
// the message it replies to (OpenClaw's "Conversation info" block) without its body, as
// Discord's events often leave it out; the gateway's ChannelStore finds (fetches once)
// that message, and the engine's turn shows it labelled apart from the user's text.
import { describe, expect, it } from 'vitest'
import { ChannelStore } from '@openclaw/context-engine'
import { createContextEngine, isTurnMessage, type HostMessage } from '@openclaw/context-engine/openclaw'
import { discordMessageCreate, discordMessageData, discordUser, snowflake } from '../examples/platforms'

const T0 = Date.parse('2026-11-20T09:00:00Z')
const CHANNEL = '1200000000000000001'
const KEY = `agent:main:discord:channel:${CHANNEL}`
const MARKER = '\u27e6openclaw:ctx\u27e7'
const ana = discordUser('1300000000000000001', 'ana')
const bo = discordUser('1300000000000000002', 'bo')
const asked = snowflake(T0)
const answer = snowflake(T0 + 60_000)

/** The user message as OpenClaw writes it: its context blocks, then the user's text. */
function userText(extra = '') {
  const info = { chat_id: `channel:${CHANNEL}`, message_id: answer, reply_to_id: asked, sender: { id: bo.id, name: 'BO' } }
  return `Conversation info: ${MARKER}\n\`\`\`json\n${JSON.stringify(info)}\n\`\`\`\n${extra}\nwhy that one?`
}

const turnText = (out: { messages: HostMessage[] }) => {
  const last = out.messages.at(-1)
  return last !== undefined && isTurnMessage(last) ? last.content[0].text : ''
}

function gateway() {
  const fetched: string[] = []
  const store = new ChannelStore({
    clock: () => T0 + 120_000,
    fetcher: {
      fetchMessages: async (req) => {
        fetched.push(req.messageIds.join(','))
        return discordMessageData({ id: asked, channelId: CHANNEL, author: ana, content: 'roll back eu-west first, us-east can wait' })
      },
    },
  })
  // Discord delivered the reply without its referenced message.
  store.ingestDiscordEvent(discordMessageCreate({ id: answer, channelId: CHANNEL, author: bo, content: 'why that one?', replyTo: { messageId: asked } }))
  return { store, fetched }
}

describe('the quoted reply in the OpenClaw engine', () => {
  it("shows the message a Discord reply answers from the gateway's ChannelStore, fetched once", async () => {
    const { store, fetched } = gateway()
    const e = createContextEngine({ path: ':memory:' }, { channelStore: store })
    const messages: HostMessage[] = [{ role: 'user', content: userText(), timestamp: T0 + 60_000 }]
    const out = await e.assemble({ sessionId: 's1', sessionKey: KEY, messages, tokenBudget: 20_000 })
    const turn = turnText(out)
    expect(turn).toContain('<quoted_reply_context>')
    expect(turn).toContain('ANA (2026-11-20T09:00:00.000000000Z): roll back eu-west first, us-east can wait')
    // The host's own message is untouched: the quote is the engine's, labelled apart.
    expect(out.messages[0]).toBe(messages[0])
    expect(fetched).toEqual([asked])
    await e.assemble({ sessionId: 's1', sessionKey: KEY, messages, tokenBudget: 20_000 })
    expect(fetched).toEqual([asked])
    expect(e.diagnostics).toEqual([])
  })

  it('adds nothing when OpenClaw already gives the body, on Slack, or without a store', async () => {
    const { store, fetched } = gateway()
    const e = createContextEngine({ path: ':memory:' }, { channelStore: store })
    const withBody = userText(`Reply target of current user message: ${MARKER}\n\`\`\`json\n${JSON.stringify({ message_id: asked, body: 'roll back eu-west first' })}\n\`\`\``)
    const out = await e.assemble({ sessionId: 's2', sessionKey: KEY, messages: [{ role: 'user', content: withBody }], tokenBudget: 20_000 })
    expect(turnText(out)).not.toContain('<quoted_reply_context>')
    const slack = await e.assemble({ sessionId: 's3', sessionKey: 'agent:main:slack:channel:c1', messages: [{ role: 'user', content: userText() }], tokenBudget: 20_000 })
    expect(turnText(slack)).not.toContain('<quoted_reply_context>')
    expect(fetched).toEqual([])
    const bare = createContextEngine({ path: ':memory:' })
    const none = await bare.assemble({ sessionId: 's4', sessionKey: KEY, messages: [{ role: 'user', content: userText() }], tokenBudget: 20_000 })
    expect(turnText(none)).not.toContain('<quoted_reply_context>')
  })

  it('notes a reply target the store cannot find, and the turn goes on', async () => {
    const store = new ChannelStore({ clock: () => T0 + 120_000 })
    const e = createContextEngine({ path: ':memory:' }, { channelStore: store })
    const out = await e.assemble({ sessionId: 's5', sessionKey: KEY, messages: [{ role: 'user', content: userText() }], tokenBudget: 20_000 })
    expect(out.messages.length).toBeGreaterThan(0)
    expect(turnText(out)).not.toContain('<quoted_reply_context>')
    expect(e.diagnostics.map((d) => d.method)).toEqual(['quotedReply'])
    expect(e.diagnostics[0].message).toContain(`the message ${asked} replied to could not be read`)
  })
})
