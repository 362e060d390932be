use super::*;
use crate::channel::message::{Event, StoredFile, StoredMessage};
use crate::channel::store::StoreConfig;
use crate::core::model::{Author, MediaRef};

const T0: u64 = 1_775_835_600_000;

/// A store whose channel C1 holds one message referencing file F1.
fn store_with_file() -> ChannelStore {
    let mut s = ChannelStore::new(StoreConfig::default());
    let author = Author {
        user_id: "U1".into(),
        display_name: "Sam".into(),
        is_bot: false,
    };
    let mut m =
        StoredMessage::new("1775835600.000100", author, "the plan").unwrap_or_else(|| panic!("ts"));
    m.extras_mut().files.push(StoredFile {
        media: MediaRef {
            artifact_id: "F1".into(),
            media_type: "application/pdf".into(),
            filename: Some("plan.pdf".into()),
            byte_length: 3,
        },
        url: Some("https://files.example/F1".into()),
    });
    s.apply(
        Event::Message {
            channel: "C1".into(),
            workspace: None,
            message: Box::new(m),
        },
        T0,
    );
    s
}

#[test]
fn a_file_no_message_references_is_unavailable_and_says_where_it_was_looked_for() {
    let mut s = store_with_file();
    assert_eq!(
        s.media_source("F9", Some("C1"), true),
        MediaSource::Unavailable(
            "File F9 is not referenced by any message the store holds for channel C1.".into()
        )
    );
    // Another channel's file is not this channel's.
    assert!(matches!(
        s.media_source("F1", Some("C2"), true),
        MediaSource::Unavailable(_)
    ));
    assert_eq!(
        s.media_source("F9", None, true),
        MediaSource::Unavailable(
            "File F9 is not referenced by any message the store holds.".into()
        )
    );
}

#[test]
fn a_referenced_file_is_downloaded_once_then_served_from_the_cache() {
    let mut s = store_with_file();
    assert_eq!(
        s.media_source("F1", Some("C1"), false),
        MediaSource::Unavailable("no fetchMedia in the fetcher".into())
    );
    match s.media_source("F1", None, true) {
        MediaSource::Fetch(job) => {
            assert_eq!(job.artifact_id.as_deref(), Some("F1"));
            assert_eq!(job.channel_id, "C1");
            assert_eq!(job.fetch, "fetchMedia");
        }
        other => panic!("{other:?}"),
    }
    let (item, held) = s.keep_download("C1", "F1", vec![1, 2, 3], T0);
    assert!(held);
    assert_eq!(item.media_type, "application/pdf");
    match s.media_source("F1", Some("C1"), false) {
        MediaSource::Cached(c) => assert_eq!(
            (c.bytes, c.filename),
            (vec![1, 2, 3], Some("plan.pdf".into()))
        ),
        other => panic!("{other:?}"),
    }
}
