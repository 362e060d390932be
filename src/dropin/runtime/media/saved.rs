//! The media state as a session entry holds it: written per scope, and read back from
//! a session's entries, newest usable first, reporting what it had to drop.

use super::*;

impl MediaState {
    /// The persisted form (`data` of the custom entry) of the scopes matching `filter`
    /// (all when `None`), ordered by scope.
    pub fn serialize(&self, filter: Option<&MediaSession>) -> String {
        let mut scopes: Vec<(&MediaSession, &SessionMedia)> = self
            .sessions
            .iter()
            .filter(|(k, s)| {
                filter.is_none_or(|f| f == *k) && (!s.files.is_empty() || !s.failures.is_empty())
            })
            .collect();
        scopes.sort_by(|a, b| a.0.cmp(b.0));
        let sessions: Vec<Value> = scopes
            .into_iter()
            .map(|(k, s)| {
                let mut files: Vec<&FileRecord> = s.files.values().collect();
                files.sort_by(|a, b| a.content_hash.cmp(&b.content_hash));
                let mut failures: Vec<&FailureRecord> = s.failures.values().collect();
                failures.sort_by(|a, b| a.content_hash.cmp(&b.content_hash));
                json!({"provider": k.provider, "session": k.session, "files": files, "failures": failures})
            })
            .collect();
        json!({"version": 1, "sessions": sessions}).to_string()
    }

    /// Loads the newest usable entry of `entries` (a session's JSONL entries, oldest
    /// first). Never fails: unusable entries and records are reported in `dropped`.
    pub fn load(&mut self, entries: &[Value]) -> MediaLoad {
        let mut report = MediaLoad::default();
        for (i, e) in entries.iter().enumerate().rev() {
            if e.get("type").and_then(Value::as_str) != Some("custom")
                || e.get("customType").and_then(Value::as_str) != Some(MEDIA_FILE_IDS_KEY)
            {
                continue;
            }
            let data = match e.get("data") {
                Some(Value::String(s)) => serde_json::from_str::<Value>(s).ok(),
                Some(v @ Value::Object(_)) => Some(v.clone()),
                _ => None,
            };
            let sessions = data
                .as_ref()
                .filter(|d| d.get("version").and_then(Value::as_u64) == Some(1))
                .and_then(|d| d.get("sessions"))
                .and_then(Value::as_array);
            let Some(sessions) = sessions else {
                report
                    .dropped
                    .push(format!("entries[{i}]: data is not a version 1 media map"));
                continue;
            };
            for (j, s) in sessions.iter().enumerate() {
                self.load_session(s, &format!("entries[{i}].sessions[{j}]"), &mut report);
            }
            report.loaded = true;
            break;
        }
        report
    }

    fn load_session(&mut self, s: &Value, path: &str, report: &mut MediaLoad) {
        let text = |k: &str| s.get(k).and_then(Value::as_str).filter(|v| !v.is_empty());
        let (Some(provider), Some(session)) = (text("provider"), text("session")) else {
            report.dropped.push(format!(
                "{path}: provider and session must be non-empty strings"
            ));
            return;
        };
        let scope = MediaSession {
            provider: provider.into(),
            session: session.into(),
        };
        let sess = self.session(&scope);
        let list = |k: &str| {
            s.get(k)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        for (n, f) in list("files").into_iter().enumerate() {
            match serde_json::from_value::<FileRecord>(f) {
                Ok(r)
                    if !r.content_hash.is_empty()
                        && !r.file_id.is_empty()
                        && r.persisted_at.is_finite() =>
                {
                    if let Some(name) = &r.filename {
                        sess.by_filename.insert(name.clone(), r.file_id.clone());
                    }
                    sess.files.insert(r.content_hash.clone(), r);
                    report.files += 1;
                }
                Ok(_) => report
                    .dropped
                    .push(format!("{path}.files[{n}]: empty hash or file id")),
                Err(e) => report.dropped.push(format!("{path}.files[{n}]: {e}")),
            }
        }
        for (n, f) in list("failures").into_iter().enumerate() {
            match serde_json::from_value::<FailureRecord>(f) {
                Ok(_) if sess.failures.len() >= MAX_FILES_PER_SESSION => {
                    report.dropped.push(format!("{path}.failures[{n}]: over {MAX_FILES_PER_SESSION} failures in the session"));
                }
                Ok(r) if !r.content_hash.is_empty() && r.retry_at.is_finite() => {
                    sess.failures.insert(r.content_hash.clone(), r);
                    report.failures += 1;
                }
                Ok(_) => report
                    .dropped
                    .push(format!("{path}.failures[{n}]: empty hash or bad retry_at")),
                Err(e) => report.dropped.push(format!("{path}.failures[{n}]: {e}")),
            }
        }
    }
}
