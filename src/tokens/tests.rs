use super::*;
use proptest::prelude::*;

#[test]
fn counts_follow_the_script() {
    let c = Counts::of("Hello,  world 2026!\n\tdeployment");
    assert_eq!(
        (
            c.words,
            c.long_letters,
            c.digits,
            c.digit_runs,
            c.punctuation,
            c.extra_spaces,
            c.line_breaks
        ),
        (3, 4, 4, 1, 2, 1, 2)
    );
    let c = Counts::of("你好，世界 😀👍🏽 ❤️ Zürich");
    assert_eq!(
        (c.cjk, c.supplementary, c.joiners, c.other, c.other_runs),
        (5, 3, 1, 2, 2)
    );
    assert_eq!(Counts::of(""), Counts::default());
    assert_eq!(upper_bound(""), 0);
}

#[test]
fn json_and_cjk_count_more_than_a_quarter_of_their_length() {
    let json =
        r#"{"message_id":"1775835600.000100","author":{"user_id":"U123","display_name":"Alice"}}"#;
    assert!(estimate(json) > json.len() as f64 / 4.0);
    let cjk = "部署已经完成，所有服务运行正常。";
    assert!(estimate(cjk) > cjk.chars().count() as f64 / 4.0 * 2.0);
}

#[test]
fn calibration_averages_bounded_observations_per_model() {
    let mut c = Calibration::default();
    assert_eq!(c.ratio("m").ratio, 1.0);
    assert_eq!(c.observe("m", 1000.0, 1300.0).ratio, 1.3);
    let r = c.observe("m", 1000.0, 1000.0);
    assert!((r.ratio - (1.3 + CALIBRATION_WEIGHT * (1.0 - 1.3))).abs() < 1e-12);
    assert_eq!(r.samples, 2);
    // Too small to tell, or absurd: skipped or clamped.
    assert_eq!(c.observe("m", 199.0, 5000.0).skipped, 1);
    assert_eq!(c.observe("x", 1000.0, 1e9).ratio, RATIO_RANGE.1);
    assert_eq!(c.observe("y", 1000.0, 1.0).ratio, RATIO_RANGE.0);
    assert_eq!(c.ratio("other").ratio, 1.0);
    // Bounded: the least recently calibrated model is forgotten.
    for i in 0..CALIBRATION_MAX_MODELS {
        c.observe(&format!("n{i}"), 1000.0, 1100.0);
    }
    assert_eq!(c.models.len(), CALIBRATION_MAX_MODELS);
    assert_eq!(c.ratio("m").samples, 0);
    assert_eq!(scale(100, 1.25), 125);
    assert_eq!(scale(100, 1.0), 100);
}

proptest! {
    #[test]
    fn the_upper_bound_is_above_the_estimate(s in any::<String>()) {
        let e = estimate(&s);
        prop_assert!(e >= 0.0);
        if !s.is_empty() {
            prop_assert!(upper_bound(&s) as f64 >= e);
        }
    }

    #[test]
    fn a_letter_run_is_one_word(n in 1usize..40) {
        let c = Counts::of(&"a".repeat(n));
        prop_assert_eq!((c.words, c.long_letters), (1, n.saturating_sub(6) as u32));
    }
}
