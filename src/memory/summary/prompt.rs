//! The request a model gets to write a compaction's summary, in the structure the
//! summary's validator accepts.

use super::{HEADINGS, ITEM_MAX_CHARS, SECTION_MAX};

/// What a model is asked to write a compaction's summary: the running summary updated
/// with `messages` (`[role] text`, oldest first), answered in exactly the structure
/// [`Summary::validate`] accepts (the five headings, at most [`SECTION_MAX`] items of at
/// most [`ITEM_MAX_CHARS`] characters each), without credentials.
pub fn model_prompt<'a>(
    previous: Option<&str>,
    messages: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> String {
    let headings = HEADINGS.map(|h| format!("\"{h}\"")).join(", ");
    let lines: Vec<String> = messages
        .into_iter()
        .map(|(role, text)| format!("[{role}] {text}"))
        .collect();
    format!(
        "Update the running summary of a chat thread with the new messages below.\n\
         Answer with the summary only, in exactly this form: the five headings {headings}, \
         in this order, each on its own line and followed by at most {SECTION_MAX} lines \
         \"- item\" of at most {ITEM_MAX_CHARS} characters (\"- (none)\" when empty). \
         Never include credentials, tokens or passwords.\n\n\
         Previous summary:\n{}\n\nNew messages:\n{}\n",
        previous.unwrap_or("(none)"),
        lines.join("\n")
    )
}
