use super::*;

/// Labels of attempt `attempt` of run `run` in session `s1` (shared with the guard tests).
pub(crate) fn labels(run: &str, attempt: u32) -> Labels {
    Labels {
        run_id: Some(run.into()),
        session_id: Some("s1".into()),
        provider: Some("anthropic".into()),
        attempt: Some(attempt),
        ..Labels::default()
    }
}

#[test]
fn names_are_the_seeds() {
    let names: Vec<_> = Counter::ALL.iter().map(|c| c.name()).collect();
    for want in [
        "claude_sdk.prompt.thread_context_stripped",
        "claude_sdk.media.inline_bytes_sent",
        "claude_sdk.media.file_ref_used",
        "claude_sdk.media.persist_failures",
        "claude_sdk.overflow.retries",
        "claude_sdk.overflow.fail_fast",
        "claude_sdk.resume.stale_recovered",
    ] {
        assert!(names.contains(&want), "{want}");
    }
    assert_eq!(
        Counter::OverflowFailFast.prometheus_name(),
        "claude_sdk_overflow_fail_fast_total"
    );
}

#[test]
fn counts_per_series_and_in_total() {
    let mut m = Metrics::default();
    m.add(Counter::InlineBytesSent, &labels("r1", 1), 100);
    m.add(Counter::InlineBytesSent, &labels("r1", 1), 50);
    m.add(Counter::InlineBytesSent, &labels("r2", 1), 7);
    assert_eq!(m.total(Counter::InlineBytesSent), 157);
    let s = m.snapshot();
    assert_eq!(s.series.len(), 2);
    assert_eq!(s.series[0].value, 150);
    assert_eq!(s.totals["claude_sdk.media.inline_bytes_sent"], 157);
    assert_eq!(s.totals["claude_sdk.overflow.retries"], 0);
}

#[test]
fn prometheus_text_format() {
    let mut m = Metrics::default();
    let mut l = labels("r\"1\n", 2);
    l.model = Some("claude-sonnet-4-5".into());
    m.add(Counter::OverflowRetries, &l, 1);
    m.add(Counter::FileRefUsed, &Labels::default(), 3);
    let text = m.prometheus();
    assert!(text.contains("# TYPE claude_sdk_overflow_retries_total counter\n"));
    assert!(text.contains(
        "claude_sdk_overflow_retries_total{runId=\"r\\\"1\\n\",sessionId=\"s1\",provider=\"anthropic\",model=\"claude-sonnet-4-5\",attempt=\"2\"} 1\n"
    ), "{text}");
    assert!(text.contains("\nclaude_sdk_media_file_ref_used_total 3\n"));
    assert!(text.ends_with("claude_sdk_metrics_series_evicted_total 0\n"));
    assert_eq!(text.matches("# HELP").count(), Counter::ALL.len() + 1);
}

#[test]
fn series_are_bounded_and_totals_survive_eviction() {
    let mut m = Metrics::new(3);
    for i in 0..5 {
        m.add(Counter::OverflowRetries, &labels(&format!("r{i}"), 1), 1);
    }
    let s = m.snapshot();
    assert_eq!(s.series.len(), 3);
    assert_eq!(s.evicted_series, 2);
    assert_eq!(s.totals["claude_sdk.overflow.retries"], 5);
    let runs: Vec<_> = s
        .series
        .iter()
        .filter_map(|x| x.labels.run_id.clone())
        .collect();
    assert_eq!(runs, vec!["r2", "r3", "r4"]);
    m.reset();
    assert_eq!(m.snapshot().series.len(), 0);
    assert_eq!(m.total(Counter::OverflowRetries), 0);
}
