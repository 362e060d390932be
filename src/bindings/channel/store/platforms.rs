//! `ChannelStore`'s Discord and Telegram intake.

use super::JsChannelStore;
use crate::bindings::errors::throw;
use crate::bindings::js::{array_arg, from_js, id_arg};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

#[napi]
impl JsChannelStore {
    /// Applies a Discord Gateway dispatch exactly as the Gateway sends it (`{ op: 0, t,
    /// d }`, or just `{ t, d }`): `MESSAGE_CREATE`, `MESSAGE_UPDATE`, `MESSAGE_DELETE`,
    /// `MESSAGE_DELETE_BULK`, `MESSAGE_REACTION_ADD` / `_REMOVE`; and `GUILD_CREATE`
    /// (sent on every connect), `THREAD_CREATE`, `THREAD_UPDATE`, `THREAD_DELETE`,
    /// `THREAD_LIST_SYNC`, `CHANNEL_CREATE` / `_UPDATE`, from which the store learns
    /// channel names and which channels are threads. A thread's messages are held in its parent channel as the replies of a
    /// thread whose id is the thread channel's id. Other dispatches are counted in
    /// `stats().ignoredEvents` and ignored. Returns how many changes were applied (0:
    /// ignored). A malformed payload throws a `TypeError` naming the field.
    #[napi(catch_unwind, ts_args_type = "payload: Record<string, unknown>")]
    pub fn ingest_discord_event(&self, env: &Env, payload: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestDiscordEvent";
        let v: Value = from_js(env, F, "payload", payload)?;
        let now = self.now(env)?;
        let applied = self.core(env)?.ingest_discord_event(&v, now);
        applied.map_err(|e| throw(env, F, &e))
    }

    /// Applies a batch of Gateway dispatches in order, as one crossing into the store
    /// (a replayed log, a burst). Every one is read first: one that cannot be read
    /// throws naming `payloads[i]` and the field, and none is applied. Returns how many
    /// changes were applied.
    #[napi(catch_unwind, ts_args_type = "payloads: Record<string, unknown>[]")]
    pub fn ingest_discord_events(&self, env: &Env, payloads: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestDiscordEvents";
        let list: Vec<Value> = array_arg(env, F, "payloads", payloads)?;
        let now = self.now(env)?;
        let applied = self.core(env)?.ingest_discord_events(&list, now);
        applied.map_err(|e| throw(env, F, &e))
    }

    /// Applies a batch of Telegram updates in order, as `getUpdates` returns them, as
    /// one crossing into the store. Every one is read first: one that cannot be read
    /// throws naming `updates[i]` and the field, and none is applied. Returns how many
    /// changes were applied.
    #[napi(catch_unwind, ts_args_type = "updates: Record<string, unknown>[]")]
    pub fn ingest_telegram_updates(&self, env: &Env, updates: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestTelegramUpdates";
        let list: Vec<Value> = array_arg(env, F, "updates", updates)?;
        let now = self.now(env)?;
        let applied = self.core(env)?.ingest_telegram_updates(&list, now);
        applied.map_err(|e| throw(env, F, &e))
    }

    /// The conversation lane of a held message, as `MemoryStore` keys it: a Discord
    /// thread and a Telegram forum topic are `topic:<channelId>:<threadId>`, a Slack
    /// thread and a Telegram reply chain `reply:<channelId>:<rootId>`, anything else
    /// `root:<channelId>`; the same lanes `@openclaw/context-engine/openclaw` derives
    /// from OpenClaw's session keys. Null when the store does not hold the message.
    #[napi(catch_unwind, ts_args_type = "channelId: string, messageId: string")]
    pub fn lane_of(
        &self,
        env: &Env,
        channel_id: Unknown,
        message_id: Unknown,
    ) -> Result<Option<String>> {
        const F: &str = "ChannelStore.laneOf";
        let channel = id_arg(env, F, "channelId", &channel_id)?;
        let id = id_arg(env, F, "messageId", &message_id)?;
        let core = self.core(env)?;
        Ok(core.lane_of(&core.resolve_channel(&channel, &id), &id))
    }

    /// Applies a Telegram Bot API `Update` exactly as `getUpdates` or a webhook delivers
    /// it: `message`, `channel_post`, `edited_message`, `edited_channel_post` and
    /// `message_reaction`. A chat is a channel (its id as text); a forum topic is a
    /// thread rooted at the topic's first message (the General topic is the chat
    /// itself), a reply chain is a thread rooted where it started, and the message a
    /// reply answers is held and shown with it. Other updates are counted in
    /// `stats().ignoredEvents` and ignored. Returns how many changes were applied (0:
    /// ignored). A malformed update throws a `TypeError` naming the field.
    #[napi(catch_unwind, ts_args_type = "update: Record<string, unknown>")]
    pub fn ingest_telegram_update(&self, env: &Env, update: Unknown) -> Result<u32> {
        const F: &str = "ChannelStore.ingestTelegramUpdate";
        let v: Value = from_js(env, F, "update", update)?;
        let now = self.now(env)?;
        let applied = self.core(env)?.ingest_telegram_update(&v, now);
        applied.map_err(|e| throw(env, F, &e))
    }
}
