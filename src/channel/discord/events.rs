//! The Gateway dispatches that take more than a line to read: edits, bulk deletions,
//! reactions, a guild's channels and roles, a channel or thread created or changed.

use super::*;

/// `MESSAGE_UPDATE`: an edit (a partial update without `content` is ignored).
pub(super) fn message_update(
    d: &Value,
    path: &str,
    threads: &ThreadDirectory,
    names: &dyn Names,
) -> Result<Intake, InputError> {
    let (channel, _) = place(&req_str(d, "channel_id", path)?, threads);
    let id = req_str(d, "id", path)?;
    let Some(content) = opt_str(d, "content", path)? else {
        return Ok(Intake::ignored("MESSAGE_UPDATE/partial"));
    };
    let text = markup::plain_text(content, d, names);
    let edited = nonempty(d, "edited_timestamp").is_some();
    Ok(Intake::one(Event::Edit {
        channel,
        message_id: id,
        text,
        edited,
    }))
}

/// `MESSAGE_DELETE_BULK`: one deletion per id.
pub(super) fn delete_bulk(
    d: &Value,
    path: &str,
    threads: &ThreadDirectory,
) -> Result<Intake, InputError> {
    let (channel, _) = place(&req_str(d, "channel_id", path)?, threads);
    let ids = match d.get("ids") {
        Some(Value::Array(ids)) => ids,
        Some(other) => {
            return Err(InputError::type_error(
                format!("{path}.ids"),
                format!("expected an array, got {}", kind(other)),
            ))
        }
        None => return Err(InputError::type_error(format!("{path}.ids"), "is required")),
    };
    let mut events = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let Some(id) = id.as_str().filter(|s| !s.is_empty()) else {
            return Err(InputError::type_error(
                format!("{path}.ids[{i}]"),
                format!("expected a non-empty string, got {}", kind(id)),
            ));
        };
        events.push(Event::Delete {
            channel: channel.clone(),
            message_id: id.to_string(),
        });
    }
    Ok(Intake {
        events,
        ..Intake::default()
    })
}

/// `MESSAGE_REACTION_ADD` / `_REMOVE` (`t` says which).
pub(super) fn reaction(
    t: &str,
    d: &Value,
    path: &str,
    threads: &ThreadDirectory,
) -> Result<Intake, InputError> {
    let (channel, _) = place(&req_str(d, "channel_id", path)?, threads);
    let emoji = req_object(d, "emoji", path)?;
    let Some(name) = nonempty(emoji, "name") else {
        // A custom emoji deleted from its guild has no name left to show.
        return Ok(Intake::ignored(format!("{t}/unnamed")));
    };
    Ok(Intake::one(Event::Reaction {
        channel,
        message_id: req_str(d, "message_id", path)?,
        name: name.to_string(),
        user: nonempty(d, "user_id").map(str::to_string),
        added: t == "MESSAGE_REACTION_ADD",
    }))
}

/// `THREAD_LIST_SYNC` and `GUILD_CREATE` (`t` says which): on every (re)connect
/// GUILD_CREATE lists the guild's channels, active threads and roles, so a restarted store
/// learns its threads back from it.
pub(super) fn guild_channels(t: &str, d: &Value, path: &str) -> Result<Intake, InputError> {
    let mut out = Intake::default();
    let guild = nonempty(
        d,
        if t == "GUILD_CREATE" {
            "id"
        } else {
            "guild_id"
        },
    );
    for list in ["channels", "threads"] {
        if let Some(Value::Array(items)) = d.get(list) {
            for (i, c) in items.iter().enumerate() {
                channel_info(c, &format!("{path}.{list}[{i}]"), guild, &mut out)?;
            }
        }
    }
    if let Some(Value::Array(roles)) = d.get("roles") {
        for (i, r) in roles.iter().enumerate() {
            out.roles.push(role_info(r, &format!("{path}.roles[{i}]"))?);
        }
    }
    Ok(out)
}

/// `THREAD_CREATE`, `THREAD_UPDATE`, `CHANNEL_CREATE`, `CHANNEL_UPDATE` (`t` says which):
/// where the channel or thread sits, and a thread newly created (held whole from its
/// first reply).
pub(super) fn channel_update(t: &str, d: &Value, path: &str) -> Result<Intake, InputError> {
    let mut out = Intake::default();
    channel_info(d, path, None, &mut out)?;
    let new = t == "THREAD_CREATE" && d.get("newly_created").and_then(Value::as_bool) == Some(true);
    let private = d.get("type").and_then(Value::as_u64) == Some(PRIVATE_THREAD);
    if new {
        out.created.extend(
            out.threads
                .iter()
                .filter_map(|(id, parent)| Some((id.clone(), parent.clone()?, private))),
        );
    }
    Ok(out)
}
