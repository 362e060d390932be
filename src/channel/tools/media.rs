//! Media as the Messages API takes it: an `image` block for the image types it reads,
//! a `document` block for PDFs (base64) and plain text (text source), and a text
//! reference for anything else or anything above the size limit.

use serde_json::{json, Value};

/// Image types the Messages API accepts in an `image` block.
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648).
pub fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(B64[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `12.4 MB`, `830 KB`, `17 B`.
pub fn human_bytes(n: u64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    if n >= 1024 * 1024 {
        format!("{:.1} MB", n as f64 / MB)
    } else if n >= 1024 {
        format!("{} KB", n / 1024)
    } else {
        format!("{n} B")
    }
}

fn is_text(media_type: &str) -> bool {
    let t = media_type.split(';').next().unwrap_or("").trim();
    t.starts_with("text/")
        || matches!(
            t,
            "application/json" | "application/x-ndjson" | "application/xml" | "application/yaml"
        )
}

/// What the tool returns for a file: a content block and whether the bytes are in it.
pub fn content_block(
    artifact_id: &str,
    filename: Option<&str>,
    media_type: &str,
    bytes: &[u8],
    max_bytes: u64,
) -> (Value, bool) {
    let name = filename.map(|f| format!(" {f:?}")).unwrap_or_default();
    let size = bytes.len() as u64;
    if size > max_bytes {
        return (
            too_large(artifact_id, filename, media_type, size, max_bytes),
            false,
        );
    }
    let base = media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    if IMAGE_TYPES.contains(&base.as_str()) {
        return (
            json!({"type": "image", "source": {"type": "base64", "media_type": base, "data": base64(bytes)}}),
            true,
        );
    }
    if base == "application/pdf" {
        return (
            json!({"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": base64(bytes)}}),
            true,
        );
    }
    if is_text(&base) {
        if let Ok(text) = std::str::from_utf8(bytes) {
            let mut doc = json!({"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": text}});
            if let Some(f) = filename {
                doc["title"] = json!(f);
            }
            return (doc, true);
        }
    }
    (
        json!({"type": "text", "text": format!(
            "[File {artifact_id}{name} ({media_type}, {}) cannot be attached: the model reads images (JPEG, PNG, GIF, WebP), PDFs and text.]",
            human_bytes(size)
        )}),
        false,
    )
}

/// The text reference for a file above the limit.
pub fn too_large(
    artifact_id: &str,
    filename: Option<&str>,
    media_type: &str,
    size: u64,
    max_bytes: u64,
) -> Value {
    let name = filename.map(|f| format!(" {f:?}")).unwrap_or_default();
    json!({"type": "text", "text": format!(
        "[File {artifact_id}{name} ({media_type}, {}) is larger than the {} limit for attaching media; it is not attached.]",
        human_bytes(size),
        human_bytes(max_bytes)
    )})
}

#[cfg(test)]
mod tests;
