//! How one media item is sent: by reference, as a saved file, by URL, inline, or not at
//! all, and the transcript entry that records it.

use super::*;

pub(super) fn plan_one(
    sess: &mut SessionMedia,
    sent: &mut HashSet<String>,
    index: usize,
    item: &MediaItem,
    opts: &PlanOptions,
) -> MediaPlan {
    let hash = item.content_hash.clone();
    let label = item.label();
    let mut plan = MediaPlan {
        index,
        mode: MediaMode::Omit,
        reason: "unsupported_media_type",
        content_hash: hash.clone(),
        block: Value::Null,
        file_id: None,
        persist: false,
        marker: None,
        retry_at: None,
        transcript: Value::Null,
    };
    let note = |text: String| json!({"type": "text", "text": text});
    let finish = |plan: MediaPlan, reference: &str| with_transcript(plan, item, reference);
    let Some(kind) = block_kind(&item.media_type) else {
        plan.block = note(format!(
            "[{label}: {} is not a media type the model accepts]",
            item.media_type
        ));
        return finish(plan, "omitted");
    };
    let in_manifest = opts.manifest.is_some_and(|m| {
        m.check(item.artifact_id.as_deref().unwrap_or(""), Some(&hash))
            .0
            != MatchKind::None
    });
    if sent.contains(&hash) || in_manifest {
        plan.mode = MediaMode::Reference;
        plan.reason = "already_attached";
        plan.block = note(format!(
            "[Already attached in this conversation: {label} ({})]",
            item.media_type
        ));
        return finish(plan, "reference");
    }
    if opts.file_refs {
        if let Some(rec) = sess.files.get(&hash) {
            plan.mode = MediaMode::File;
            plan.reason = "persisted_file";
            plan.file_id = Some(rec.file_id.clone());
            plan.block = source_block(kind, json!({"type": "file", "file_id": rec.file_id}));
            sent.insert(hash.clone());
            return finish(plan, "file");
        }
    }
    let media_type = base_type(&item.media_type);
    let is_text = media_type == "text/plain";
    if let Some(url) = item
        .durable_url
        .as_deref()
        .filter(|u| u.starts_with("https://") && !is_text)
    {
        plan.mode = MediaMode::Url;
        plan.reason = "durable_url";
        plan.block = source_block(kind, json!({"type": "url", "url": url}));
        sent.insert(hash.clone());
        return finish(plan, "url");
    }
    let limit = if kind == "image" {
        MAX_INLINE_IMAGE_BYTES
    } else {
        MAX_INLINE_DOCUMENT_BYTES
    };
    if item.byte_length > limit {
        plan.reason = "too_large_to_inline";
        plan.block = note(format!(
            "[{label} ({}, {} bytes) is over the {limit}-byte inline limit and has no file reference or URL; not sent]",
            item.media_type, item.byte_length
        ));
        return finish(plan, "omitted");
    }
    plan.mode = MediaMode::Inline;
    inline_reason(&mut plan, sess, item, opts, &label);
    plan.block = if is_text {
        source_block(kind, json!({"type": "text", "media_type": "text/plain"}))
    } else {
        source_block(kind, json!({"type": "base64", "media_type": media_type}))
    };
    if plan.persist {
        if let Some(f) = &item.filename {
            if sess.pending.len() < MAX_PENDING_PER_SESSION || sess.pending.contains_key(f) {
                sess.pending.insert(f.clone(), hash.clone());
            }
        }
    }
    sent.insert(hash.clone());
    finish(plan, "inline")
}

/// `plan` with the transcript entry that records how the item was sent.
fn with_transcript(mut plan: MediaPlan, item: &MediaItem, reference: &str) -> MediaPlan {
    plan.transcript = json!({
        "content_hash": plan.content_hash,
        "source": item.filename.as_deref().or(item.artifact_id.as_deref()).or(item.durable_url.as_deref()),
        "media_type": item.media_type,
        "byte_length": item.byte_length,
        "reference": reference,
        "file_id": plan.file_id,
    });
    plan
}

/// Why an item goes inline, and whether it is to be saved as a file: an earlier failure
/// to save it still in its pause sends it inline with a marker saying so.
fn inline_reason(
    plan: &mut MediaPlan,
    sess: &SessionMedia,
    item: &MediaItem,
    opts: &PlanOptions,
    label: &str,
) {
    let failure = sess.failures.get(&plan.content_hash).or_else(|| {
        item.filename
            .as_ref()
            .and_then(|f| sess.failures.get(&format!("filename:{f}")))
    });
    (plan.reason, plan.persist) = match failure {
        Some(f) if f.retry_at > opts.now_ms => {
            plan.retry_at = Some(f.retry_at);
            plan.marker = Some(format!(
                "[media persistence failed for {label}: {}; sent inline]",
                f.error.replace(['[', ']', '\n'], " ")
            ));
            ("persist_failed_fallback", false)
        }
        Some(_) if opts.file_refs => ("persist_retry", true),
        _ if !opts.file_refs => ("file_refs_unavailable", false),
        _ if item.byte_length <= opts.inline_max_bytes => ("under_threshold", true),
        _ => ("not_persisted_yet", true),
    };
}
