//! Attachment manifest: which media a conversation has already been sent, so a turn
//! can reference it by name instead of re-sending its bytes.
//!
//! The manifest is persisted as a session custom entry
//! `{ type: "custom", customType: ATTACHMENT_MANIFEST_KEY, data }` whose `data` is the
//! JSON text of `{ "entries": { <artifact_id>: AttachmentRecord } }`. Loading never
//! fails: the newest entry that holds a usable manifest wins, and records inside it that
//! fail validation are dropped one at a time.

use crate::core::input::{self, InputError};
use napi_derive::napi;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;

/// The custom-entry type under which the manifest is persisted.
pub const ATTACHMENT_MANIFEST_KEY: &str = "openclaw:claude-sdk-attachment-manifest";

/// A manifest's persisted text when every record is valid and canonical, as a regular
/// expression (JavaScript syntax): `{"entries":{...}}`, each [`AttachmentRecord`] keyed by
/// its own `artifact_id` (the key's text equals the id's), its fields in declaration order,
/// the required ones filled, `source_thread_id` `null` or a string, `included_at_turn` a
/// whole number JSON writes plainly (below 10^15). Such a text is what
/// `serializeManifest` writes, so `js/dropin/manifest.js` takes it as it is (and parses it for
/// `loadManifestFromEntries`); any other goes through the native exports, which name the
/// bad field or drop bad records one by one.
pub const CANONICAL_TEXT_PATTERN: &str = concat!(
    r#"^\{"entries":\{(?:"#,
    r#""((?:[^"\\]|\\.)+)":\{"artifact_id":"\1""#,
    r#","display_name":"(?:[^"\\]|\\.)+""#,
    r#","media_type":"(?:[^"\\]|\\.)+""#,
    r#","content_hash":"(?:[^"\\]|\\.)+""#,
    r#","source_message_id":"(?:[^"\\]|\\.)+""#,
    r#","source_thread_id":(?:null|"(?:[^"\\]|\\.)*")"#,
    r#","included_at_turn":(?:0|[1-9][0-9]{0,14})\}"#,
    r#"(?:,(?="))?)*\}\}$"#,
);

/// The text put before media attached again after a compaction.
pub fn recovery_preamble(items: usize) -> String {
    format!("[Post-compaction context recovery: re-attaching {items} media items from this thread]")
}

/// One media item already sent to the conversation (snake_case, as sessions persist it).
#[napi(object, object_to_js = false, object_from_js = false, use_nullable = true)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttachmentRecord {
    #[serde(alias = "artifactId")]
    #[napi(js_name = "artifact_id")]
    pub artifact_id: String,
    /// Human-readable name used when presenting the item to Claude.
    #[serde(alias = "displayName")]
    #[napi(js_name = "display_name")]
    pub display_name: String,
    #[serde(alias = "mediaType")]
    #[napi(js_name = "media_type")]
    pub media_type: String,
    /// SHA-256 of the content bytes, lowercase hex.
    #[serde(alias = "contentHash")]
    #[napi(js_name = "content_hash")]
    pub content_hash: String,
    #[serde(alias = "sourceMessageId")]
    #[napi(js_name = "source_message_id")]
    pub source_message_id: String,
    /// `null` for a top-level channel message.
    #[serde(alias = "sourceThreadId", default)]
    #[napi(js_name = "source_thread_id")]
    pub source_thread_id: Option<String>,
    #[serde(alias = "includedAtTurn", alias = "turn")]
    #[napi(js_name = "included_at_turn", ts_type = "number")]
    pub included_at_turn: u64,
}

impl AttachmentRecord {
    /// Field-level checks beyond types: ids, name, type and hash must be non-empty.
    pub fn check(&self) -> Result<(), String> {
        for (name, v) in [
            ("artifact_id", &self.artifact_id),
            ("display_name", &self.display_name),
            ("media_type", &self.media_type),
            ("content_hash", &self.content_hash),
            ("source_message_id", &self.source_message_id),
        ] {
            if v.is_empty() {
                return Err(format!("{name} must be a non-empty string"));
            }
        }
        Ok(())
    }
}

/// How a candidate attachment matches the manifest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    /// The same artifact id is recorded.
    ArtifactId,
    /// Another artifact with the same content hash is recorded (a re-upload).
    ContentHash,
    /// Not attached yet.
    None,
}

impl MatchKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::ArtifactId => "artifact_id",
            MatchKind::ContentHash => "content_hash",
            MatchKind::None => "none",
        }
    }
}

/// A manifest's records in their stored order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Manifest {
    pub records: Vec<AttachmentRecord>,
}

impl Serialize for Manifest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        struct Entries<'a>(&'a [AttachmentRecord]);
        impl Serialize for Entries<'_> {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut m = s.serialize_map(Some(self.0.len()))?;
                for r in self.0 {
                    m.serialize_entry(&r.artifact_id, r)?;
                }
                m.end()
            }
        }
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry("entries", &Entries(&self.records))?;
        m.end()
    }
}

impl Manifest {
    /// Looks a candidate up: by artifact id first, then by content hash.
    pub fn check(
        &self,
        artifact_id: &str,
        content_hash: Option<&str>,
    ) -> (MatchKind, Option<&AttachmentRecord>) {
        if let Some(r) = self.records.iter().find(|r| r.artifact_id == artifact_id) {
            return (MatchKind::ArtifactId, Some(r));
        }
        if let Some(h) = content_hash.filter(|h| !h.is_empty()) {
            if let Some(r) = self.records.iter().find(|r| r.content_hash == h) {
                return (MatchKind::ContentHash, Some(r));
            }
        }
        (MatchKind::None, None)
    }
}

/// A JSON object's members in document order; a repeated key keeps its first position
/// and its last value, as `JSON.parse` does.
#[derive(Debug, Default)]
pub struct OrderedObject(pub Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for OrderedObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedObject, A::Error> {
                let mut out: Vec<(String, serde_json::Value)> = Vec::new();
                let mut index: HashMap<String, usize> = HashMap::new();
                while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
                    match index.get(&k) {
                        Some(&i) => out[i].1 = v,
                        None => {
                            index.insert(k.clone(), out.len());
                            out.push((k, v));
                        }
                    }
                }
                Ok(OrderedObject(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct StoredManifest {
    entries: OrderedObject,
}

/// A record failed validation while loading.
#[derive(Debug, Clone, PartialEq)]
pub struct DroppedRecord {
    pub key: String,
    pub reason: String,
}

/// Reads one persisted manifest (`data` of a custom entry). `None` when the text is not a
/// manifest at all, or when it held records and none of them was valid.
pub fn parse_manifest_data(data: &str) -> Option<(Manifest, Vec<DroppedRecord>)> {
    if let Some(m) = all_valid(data) {
        return Some((m, Vec::new()));
    }
    let stored: StoredManifest = serde_json::from_str(data).ok()?;
    let total = stored.entries.0.len();
    let mut records = Vec::with_capacity(total);
    let mut dropped = Vec::new();
    for (key, value) in stored.entries.0 {
        let checked = serde_json::from_value::<AttachmentRecord>(value)
            .map_err(|e| e.to_string())
            .and_then(|r| r.check().map(|()| r))
            .and_then(|r| {
                if r.artifact_id == key {
                    Ok(r)
                } else {
                    Err(format!(
                        "key does not match artifact_id {:?}",
                        r.artifact_id
                    ))
                }
            });
        match checked {
            Ok(r) => records.push(r),
            Err(reason) => dropped.push(DroppedRecord { key, reason }),
        }
    }
    if total > 0 && records.is_empty() {
        return None;
    }
    Some((Manifest { records }, dropped))
}

#[derive(Deserialize)]
struct StrictManifest {
    entries: OrderedObject,
}

/// `entries` read straight into records, in document order: the fast path for the common
/// case where every record is well formed (no intermediate `Value`s).
struct TypedEntries(Vec<(String, AttachmentRecord)>);

impl<'de> Deserialize<'de> for TypedEntries {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypedEntries;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of attachment records")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<TypedEntries, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((k, v)) = map.next_entry::<String, AttachmentRecord>()? {
                    out.push((k, v));
                }
                Ok(TypedEntries(out))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Deserialize)]
struct TypedManifest {
    entries: TypedEntries,
}

/// The records of a manifest in which every record is valid, unique and keyed by its own
/// artifact id; `None` when any of that does not hold (the caller then takes a slow path).
fn all_valid(json: &str) -> Option<Manifest> {
    let typed: TypedManifest = serde_json::from_str(json).ok()?;
    let mut seen = std::collections::HashSet::with_capacity(typed.entries.0.len());
    for (key, r) in &typed.entries.0 {
        if r.artifact_id != *key || r.check().is_err() || !seen.insert(key.as_str()) {
            return None;
        }
    }
    Some(Manifest {
        records: typed.entries.0.into_iter().map(|(_, r)| r).collect(),
    })
}

/// Reads a manifest strictly, for writing it out: every record must be valid and keyed by
/// its own artifact id. Errors name the field (`entries.F123.content_hash`).
pub fn validate_manifest_json(json: &str) -> Result<Manifest, InputError> {
    if let Some(m) = all_valid(json) {
        return Ok(m);
    }
    let stored: StrictManifest = input::parse(json, "")?;
    let mut records = Vec::with_capacity(stored.entries.0.len());
    for (key, value) in stored.entries.0 {
        let path = format!("entries.{key}");
        let record = match AttachmentRecord::deserialize(&value) {
            Ok(r) => r,
            Err(_) => input::parse(&value.to_string(), &path)?,
        };
        record
            .check()
            .map_err(|msg| InputError::range_error(path.as_str(), msg))?;
        if record.artifact_id != key {
            return Err(InputError::range_error(
                format!("{path}.artifact_id"),
                format!("must equal its key {key:?}, got {:?}", record.artifact_id),
            ));
        }
        records.push(record);
    }
    Ok(Manifest { records })
}

#[cfg(test)]
mod tests;
