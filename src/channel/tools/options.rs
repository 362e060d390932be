//! `store.tools(channelId, options)`: how the tools are named and how large a media item
//! may be before it comes back as a text reference.

use super::DEFAULT_MAX_MEDIA_BYTES;
use crate::core::input::{whole_number, InputError};
use napi_derive::napi;
use serde::Deserialize;

/// Options of `store.tools(channelId, options)`.
#[napi(object, object_to_js = false, object_from_js = false, js_name = "ChannelToolsOptions")]
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ToolsOptions {
    /// Names in `definitions()`: `"api"` (`channel_context`, `channel_messages`; the
    /// default, valid Messages API tool names) or `"dotted"` (the drop-in
    /// `channel.context`, `channel.messages`). `execute` accepts both either way.
    #[napi(ts_type = "'api' | 'dotted'")]
    pub tool_names: Option<String>,
    /// Media larger than this many bytes are returned as a text reference instead of a
    /// content block (default 5 MB, 5242880).
    pub max_media_bytes: Option<f64>,
}

/// The tools' settings, checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolsConfig {
    /// `definitions()` names the tools `channel.context` / `channel.messages`.
    pub dotted: bool,
    pub max_media_bytes: u64,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        ToolsConfig {
            dotted: false,
            max_media_bytes: DEFAULT_MAX_MEDIA_BYTES,
        }
    }
}

impl TryFrom<ToolsOptions> for ToolsConfig {
    type Error = InputError;

    fn try_from(o: ToolsOptions) -> Result<Self, InputError> {
        let dotted = match o.tool_names.as_deref() {
            None | Some("api") => false,
            Some("dotted") => true,
            Some(other) => {
                return Err(InputError::range_error(
                    "options.toolNames",
                    format!("expected \"api\" or \"dotted\", got {other:?}"),
                ))
            }
        };
        let max_media_bytes = match o.max_media_bytes {
            None => DEFAULT_MAX_MEDIA_BYTES,
            Some(n) => whole_number(n, "options.maxMediaBytes", "bytes")?,
        };
        Ok(ToolsConfig {
            dotted,
            max_media_bytes,
        })
    }
}

#[cfg(test)]
mod tests;
