// Discord Gateway dispatches and Telegram Bot API updates, built in the platforms' own
// types (discord-api-types, @grammyjs/types) so `npm test` type-checks every fixture the
// intake tests feed the store. Generated from a few parameters, never copied payloads.
import {
  ChannelFlags,
  ChannelType,
  GuildMemberFlags,
  GatewayDispatchEvents,
  GatewayOpcodes,
  MessageType,
  type APIUser,
  type GatewayMessageCreateDispatch,
  type GatewayMessageCreateDispatchData,
  type GatewayMessageDeleteBulkDispatch,
  type GatewayMessageDeleteDispatch,
  type GatewayMessageReactionAddDispatch,
  type GatewayMessageUpdateDispatch,
  type GatewayThreadCreateDispatch,
} from 'discord-api-types/v10'
import type { Message, Update } from '@grammyjs/types'

/** Discord's epoch in Unix milliseconds. */
export const DISCORD_EPOCH_MS = 1_420_070_400_000n

/** The snowflake of a message created at `ms` (Unix milliseconds), `seq`-th that millisecond. */
export function snowflake(ms: number, seq = 0): string {
  return (((BigInt(ms) - DISCORD_EPOCH_MS) << 22n) | BigInt(seq)).toString()
}

export function discordUser(id: string, username: string, bot = false): APIUser {
  return { id, username, discriminator: '0', global_name: username.toUpperCase(), avatar: null, bot }
}

export interface DiscordMessageSpec {
  id: string
  channelId: string
  guildId?: string
  author: APIUser
  content: string
  nick?: string
  replyTo?: { messageId: string; referenced?: GatewayMessageCreateDispatchData | null }
  attachments?: Array<{ id: string; filename: string; size: number; contentType?: string }>
  mentions?: APIUser[]
  /** The thread this message started, with its message count. */
  startedThread?: { id: string; messageCount: number }
}

export function discordMessageData(s: DiscordMessageSpec): GatewayMessageCreateDispatchData {
  const ms = Number((BigInt(s.id) >> 22n) + DISCORD_EPOCH_MS)
  const data: GatewayMessageCreateDispatchData = {
    id: s.id,
    channel_id: s.channelId,
    author: s.author,
    content: s.content,
    timestamp: new Date(ms).toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: s.mentions ?? [],
    mention_roles: [],
    attachments: (s.attachments ?? []).map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      url: `https://cdn.discordapp.com/attachments/${s.channelId}/${a.id}/${a.filename}`,
      proxy_url: `https://media.discordapp.net/attachments/${s.channelId}/${a.id}/${a.filename}`,
      ...(a.contentType ? { content_type: a.contentType } : {}),
    })),
    embeds: [],
    pinned: false,
    type: s.replyTo ? MessageType.Reply : MessageType.Default,
  }
  if (s.guildId) data.guild_id = s.guildId
  if (s.nick) data.member = { nick: s.nick, roles: [], joined_at: new Date(ms).toISOString(), deaf: false, mute: false, flags: 0 as GuildMemberFlags }
  if (s.replyTo) {
    data.message_reference = { message_id: s.replyTo.messageId, channel_id: s.channelId }
    if (s.replyTo.referenced !== undefined) data.referenced_message = s.replyTo.referenced
  }
  if (s.startedThread) {
    data.thread = {
      id: s.startedThread.id,
      type: ChannelType.PublicThread,
      parent_id: s.channelId,
      name: `thread ${s.startedThread.id}`,
      message_count: s.startedThread.messageCount,
      member_count: 1,
      guild_id: s.guildId ?? '1',
      flags: 0 as ChannelFlags,
      applied_tags: [],
    }
  }
  return data
}

export function discordMessageCreate(s: DiscordMessageSpec): GatewayMessageCreateDispatch {
  return { op: GatewayOpcodes.Dispatch, t: GatewayDispatchEvents.MessageCreate, s: 1, d: discordMessageData(s) }
}

export function discordMessageUpdate(s: DiscordMessageSpec, editedAt: string): GatewayMessageUpdateDispatch {
  return {
    op: GatewayOpcodes.Dispatch,
    t: GatewayDispatchEvents.MessageUpdate,
    s: 2,
    d: { ...discordMessageData(s), edited_timestamp: editedAt },
  }
}

export function discordMessageDelete(channelId: string, id: string, guildId?: string): GatewayMessageDeleteDispatch {
  return { op: GatewayOpcodes.Dispatch, t: GatewayDispatchEvents.MessageDelete, s: 3, d: { id, channel_id: channelId, ...(guildId ? { guild_id: guildId } : {}) } }
}

export function discordMessageDeleteBulk(channelId: string, ids: string[]): GatewayMessageDeleteBulkDispatch {
  return { op: GatewayOpcodes.Dispatch, t: GatewayDispatchEvents.MessageDeleteBulk, s: 4, d: { ids, channel_id: channelId } }
}

export function discordReactionAdd(channelId: string, messageId: string, userId: string, emoji: { id: string | null; name: string }): GatewayMessageReactionAddDispatch {
  return {
    op: GatewayOpcodes.Dispatch,
    t: GatewayDispatchEvents.MessageReactionAdd,
    s: 5,
    d: { user_id: userId, channel_id: channelId, message_id: messageId, emoji, burst: false, type: 0 },
  }
}

export function discordThreadCreate(id: string, parentId: string, guildId: string, name: string): GatewayThreadCreateDispatch {
  return {
    op: GatewayOpcodes.Dispatch,
    t: GatewayDispatchEvents.ThreadCreate,
    s: 6,
    d: {
      id,
      type: ChannelType.PublicThread,
      guild_id: guildId,
      parent_id: parentId,
      name,
      flags: 0 as ChannelFlags,
      applied_tags: [],
      newly_created: true,
    },
  }
}

export interface TelegramMessageSpec {
  chatId: number
  chatTitle?: string
  forum?: boolean
  messageId: number
  date: number
  from: { id: number; firstName: string; lastName?: string; isBot?: boolean }
  text?: string
  topicId?: number
  /** The message replied to (a reply carries it without its own `reply_to_message`). */
  replyTo?: NonNullable<Message['reply_to_message']>
  quote?: string
  photo?: Array<{ fileId: string; width: number; height: number; size: number }>
  topicCreated?: string
}

export function telegramMessage(s: TelegramMessageSpec): Message {
  const chat: Message['chat'] = s.forum
    ? { id: s.chatId, type: 'supergroup', title: s.chatTitle ?? 'group', is_forum: true }
    : { id: s.chatId, type: 'supergroup', title: s.chatTitle ?? 'group' }
  const m: Message = {
    message_id: s.messageId,
    date: s.date,
    chat,
    from: { id: s.from.id, is_bot: s.from.isBot ?? false, first_name: s.from.firstName, ...(s.from.lastName ? { last_name: s.from.lastName } : {}) },
  } as Message
  const out = m as Message & Record<string, unknown>
  if (s.text !== undefined) out.text = s.text
  if (s.topicId !== undefined) {
    out.message_thread_id = s.topicId
    out.is_topic_message = true
  }
  if (s.replyTo) out.reply_to_message = s.replyTo
  if (s.quote) out.quote = { text: s.quote, position: 0 }
  if (s.photo) out.photo = s.photo.map((p, i) => ({ file_id: p.fileId, file_unique_id: `u${i}${p.fileId}`, width: p.width, height: p.height, file_size: p.size }))
  if (s.topicCreated !== undefined) out.forum_topic_created = { name: s.topicCreated, icon_color: 0x6fb9f0 }
  return m
}

export function telegramUpdate(updateId: number, message: Message, field: 'message' | 'edited_message' | 'channel_post' = 'message'): Update {
  return { update_id: updateId, [field]: message } as Update
}

export function telegramReaction(updateId: number, chatId: number, messageId: number, userId: number, date: number, oldEmoji: string[], newEmoji: string[]): Update {
  return {
    update_id: updateId,
    message_reaction: {
      chat: { id: chatId, type: 'supergroup', title: 'group' },
      message_id: messageId,
      user: { id: userId, is_bot: false, first_name: 'u' },
      date,
      old_reaction: oldEmoji.map((emoji) => ({ type: 'emoji', emoji }) as const),
      new_reaction: newEmoji.map((emoji) => ({ type: 'emoji', emoji }) as const),
    },
  } as Update
}
