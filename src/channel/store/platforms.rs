//! Discord and Telegram payloads into the store: each platform's adapter reads its
//! payload into neutral events; here the store learns what else the payload tells
//! (channel names, which Discord channels are threads) and applies the events, so the
//! snapshot, threads, tools, caches and rate limits are one model for every platform.

use super::ChannelStore;
use crate::channel::discord;
use crate::channel::message::Event;
use crate::channel::telegram;
use crate::core::input::InputError;
use crate::core::keys::{thread_key, Placement};
use serde_json::Value;
use std::collections::HashMap;

/// The platform's id of a channel the store keys `key` (see `ChannelStore::channel_key`).
pub fn platform_id(key: &str) -> &str {
    [
        crate::channel::discord::PLATFORM,
        crate::channel::telegram::PLATFORM,
    ]
    .iter()
    .find_map(|p| {
        key.strip_prefix(p)
            .and_then(|rest| rest.strip_prefix(':'))
            .filter(|rest| !rest.is_empty())
    })
    .unwrap_or(key)
}

/// Notes the threads a dispatch opened (`Some(parent)`) or deleted.
fn open_threads(directory: &mut discord::ThreadDirectory, threads: &[(String, Option<String>)]) {
    for (thread, parent) in threads {
        match parent {
            Some(p) => directory.open(thread, p),
            None => directory.close(thread),
        }
    }
}

impl ChannelStore {
    /// Tags `channel` with `platform` (and names it) unless it already says so, so a
    /// stream of messages does not note the channel as changed each time.
    fn tag_channel(
        &mut self,
        channel: &str,
        name: Option<&str>,
        platform: &str,
        workspace: Option<&str>,
    ) {
        let known = self.channels.get(channel).is_some_and(|c| {
            c.platform.as_deref() == Some(platform)
                && (name.is_none() || c.name.as_deref() == name)
                && (workspace.is_none() || c.workspace.as_deref() == workspace)
        });
        if !known {
            let owned = |s: Option<&str>| s.map(str::to_string);
            self.set_channel(
                channel,
                owned(name),
                Some(platform.to_string()),
                owned(workspace),
            );
        }
    }

    /// Tags `channel` with `platform` when it has none yet (a channel first met through
    /// a fetched page).
    pub(super) fn tag_platform(&mut self, channel: &str, platform: &str) {
        if self
            .channels
            .get(channel)
            .is_none_or(|c| c.platform.is_none())
        {
            self.set_channel(channel, None, Some(platform.to_string()), None);
        }
    }

    /// Applies a Discord Gateway dispatch (`{ t, d }`). Returns how many changes it
    /// made to held messages, plus one when it told the store about channels or threads
    /// (0: ignored, and counted).
    pub fn ingest_discord_event(&mut self, payload: &Value, now: u64) -> Result<u32, InputError> {
        let intake = discord::gateway_event(payload, &self.discord_threads, &self.names())?;
        Ok(self.apply_discord(intake, now))
    }

    /// Applies a batch of Gateway dispatches in order. Every one is read first (threads
    /// a dispatch of the batch opens place the later ones): one that cannot be read
    /// throws naming `payloads[i]` and none is applied.
    pub fn ingest_discord_events(
        &mut self,
        payloads: &[Value],
        now: u64,
    ) -> Result<u32, InputError> {
        let mut threads = self.discord_threads.clone();
        let mut intakes = Vec::with_capacity(payloads.len());
        for (i, p) in payloads.iter().enumerate() {
            let intake = discord::gateway_event(p, &threads, &self.names())
                .map_err(|e| e.rerooted("payload", &format!("payloads[{i}]")))?;
            open_threads(&mut threads, &intake.threads);
            intakes.push(intake);
        }
        Ok(intakes
            .into_iter()
            .map(|i| self.apply_discord(i, now))
            .sum())
    }

    /// The key the store holds channel `raw` of `platform` under: the id itself, unless a
    /// channel of another platform holds that id already; then `<platform>:<id>` (the
    /// platforms' ids are separate spaces: a Discord channel and a Telegram chat that
    /// happen to share an id never share state). Callers address it by that key.
    pub fn channel_key(&self, platform: &str, raw: &str) -> String {
        let qualified = format!("{platform}:{raw}");
        if self.channels.contains_key(&qualified) {
            return qualified;
        }
        match self.platform(raw) {
            Some(p) if p != platform => qualified,
            _ => raw.to_string(),
        }
    }

    /// The channel a caller means by `id` for message `anchor` (`buildContext`,
    /// `getMessage`, `threadActivity`, `laneOf`): `id` as given, unless another
    /// platform's channel of that id (keyed `<platform>:<id>`) is the one that holds the
    /// anchor.
    pub fn resolve_channel(&self, id: &str, anchor: &str) -> String {
        if self.find(id, anchor).is_some() {
            return id.to_string();
        }
        [discord::PLATFORM, telegram::PLATFORM]
            .iter()
            .map(|p| format!("{p}:{id}"))
            .find(|key| self.find(key, anchor).is_some())
            .unwrap_or_else(|| id.to_string())
    }

    /// The events of a platform's payload with their channels as the store keys them.
    fn keyed(&self, platform: &str, mut events: Vec<Event>) -> Vec<Event> {
        for e in &mut events {
            if let Some(c) = e.channel_mut() {
                *c = self.channel_key(platform, c);
            }
        }
        events
    }

    fn apply_discord(&mut self, intake: discord::Intake, now: u64) -> u32 {
        let learnt =
            !intake.threads.is_empty() || !intake.channels.is_empty() || !intake.roles.is_empty();
        for (id, name) in &intake.roles {
            self.discord_roles.set(id, name.as_deref());
        }
        open_threads(&mut self.discord_threads, &intake.threads);
        for (id, name, guild) in &intake.channels {
            // A thread is held inside its parent, not as a channel of its own.
            if self.discord_threads.parent_of(id).is_none() {
                let key = self.channel_key(discord::PLATFORM, id);
                self.tag_channel(&key, name.as_deref(), discord::PLATFORM, guild.as_deref());
            }
        }
        let events = self.keyed(discord::PLATFORM, intake.events);
        for e in &events {
            if let Event::Message {
                channel, workspace, ..
            } = e
            {
                self.tag_channel(channel, None, discord::PLATFORM, workspace.as_deref());
            }
        }
        for (thread, parent, private) in &intake.created {
            let parent = self.channel_key(discord::PLATFORM, parent);
            self.open_new_thread(&parent, thread, *private, now);
        }
        self.apply_all(events, now) + u32::from(learnt)
    }

    /// Applies a Telegram Bot API `Update`. Returns how many changes it made to held
    /// messages (0: ignored, and counted).
    pub fn ingest_telegram_update(&mut self, update: &Value, now: u64) -> Result<u32, InputError> {
        let intake = telegram::update(update, &|chat, id| {
            self.thread_of(&self.channel_key(telegram::PLATFORM, chat), id)
        })?;
        Ok(self.apply_telegram(intake, now))
    }

    /// Applies a batch of updates (what `getUpdates` returns) in order. Every one is read
    /// first (a reply places itself by the messages of the batch before it): one that
    /// cannot be read throws naming `updates[i]` and none is applied.
    pub fn ingest_telegram_updates(
        &mut self,
        updates: &[Value],
        now: u64,
    ) -> Result<u32, InputError> {
        // The threads of the batch's own messages, for the replies after them.
        let mut placed: HashMap<(String, String), Option<String>> = HashMap::new();
        let mut intakes = Vec::with_capacity(updates.len());
        for (i, u) in updates.iter().enumerate() {
            let thread_of =
                |chat: &str, id: &str| match placed.get(&(chat.to_string(), id.to_string())) {
                    Some(t) => t.clone(),
                    None => self.thread_of(&self.channel_key(telegram::PLATFORM, chat), id),
                };
            let intake = telegram::update(u, &thread_of)
                .map_err(|e| e.rerooted("update", &format!("updates[{i}]")))?;
            for e in &intake.events {
                if let Event::Message {
                    channel, message, ..
                } = e
                {
                    let key = (channel.clone(), message.id().to_string());
                    placed.insert(key, message.thread_id.as_deref().map(str::to_string));
                }
            }
            intakes.push(intake);
        }
        Ok(intakes
            .into_iter()
            .map(|i| self.apply_telegram(i, now))
            .sum())
    }

    /// The thread a held message of `channel` is in.
    fn thread_of(&self, channel: &str, id: &str) -> Option<String> {
        self.find(channel, id)?
            .thread_id
            .as_deref()
            .map(str::to_string)
    }

    fn apply_telegram(&mut self, intake: telegram::Intake, now: u64) -> u32 {
        if let Some((chat, name)) = &intake.chat {
            let key = self.channel_key(telegram::PLATFORM, chat);
            self.tag_channel(&key, name.as_deref(), telegram::PLATFORM, None);
        }
        let events = self.keyed(telegram::PLATFORM, intake.events);
        self.apply_all(events, now)
    }

    /// The platform `channel` is on, when the store knows it.
    pub fn platform(&self, channel: &str) -> Option<&str> {
        self.channels
            .get(channel)
            .and_then(|c| c.platform.as_deref())
    }

    /// The channel's messages can only come from events: Telegram's Bot API has no
    /// method to read a chat's history, a thread's replies or one message.
    pub(super) fn events_only(&self, channel: &str) -> bool {
        self.platform(channel) == Some(telegram::PLATFORM)
    }

    /// The conversation lane (the memory store's thread key) of a held message: a
    /// Discord thread and a Telegram forum topic are topics (`topic:<channel>:<thread>`),
    /// a Slack thread and a Telegram reply chain are reply chains of their root
    /// (`reply:<channel>:<root>`), anything else is the channel's root lane.
    pub fn lane_of(&self, channel: &str, id: &str) -> Option<String> {
        let m = self.find(channel, id)?;
        let platform = self
            .channels
            .get(channel)
            .and_then(|c| c.platform.as_deref());
        let thread = m.thread_id.as_deref();
        let topic = match platform {
            Some(discord::PLATFORM) => true,
            // A reply chain also shows in the chat; a topic's messages do not.
            Some(telegram::PLATFORM) => !m.broadcast,
            _ => false,
        };
        // Lanes are per session, and a session is one platform's: the platform's own id.
        let place = Placement {
            chat_id: platform_id(channel),
            topic_id: thread.filter(|_| topic),
            reply_to: thread.filter(|_| !topic),
        };
        Some(thread_key(&place, |_| None))
    }

    /// Discord channels known to be threads.
    pub fn discord_threads(&self) -> &discord::ThreadDirectory {
        &self.discord_threads
    }
}
