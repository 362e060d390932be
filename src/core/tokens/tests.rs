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
            c.space_runs,
            c.line_breaks,
            c.tabs
        ),
        (3, 4, 4, 1, 2, 1, 1, 1, 1)
    );
    // A table's padding: each run of spaces is one run however long; box drawing and
    // other symbols are counted apart from other non-ASCII text.
    let c = Counts::of("a     b  c d\u{2502}\u{2500}\u{2500}\u{2192}\u{e9}");
    assert_eq!(
        (
            c.extra_spaces,
            c.space_runs,
            c.symbols,
            c.other,
            c.other_runs
        ),
        (5, 2, 4, 1, 1)
    );
    let c = Counts::of("你好，世界 😀👍🏽 ❤️ Zürich");
    assert_eq!(
        (
            c.cjk,
            c.supplementary,
            c.joiners,
            c.symbols,
            c.other,
            c.other_runs
        ),
        (5, 3, 1, 1, 1, 1)
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
}

#[test]
fn a_sum_is_bounded_once_not_once_per_part() {
    let parts = [
        "Deploy is done, all green.",
        "Can you check the staging logs?",
        "ok",
    ];
    let whole: f64 = parts.iter().map(|p| estimate(p)).sum();
    let per_part: u64 = parts.iter().map(|p| upper_bound(p)).sum();
    let once = Meter::REFERENCE.bound(whole);
    assert!(once < per_part, "{once} vs {per_part}");
    assert!(once as f64 >= whole);
    // The formula, with its constants.
    let e = 1000.0_f64;
    let want = (SUM_SLOPE * e + SUM_SPREAD * e.sqrt() + SUM_OFFSET).ceil() as u64;
    assert_eq!(Meter::REFERENCE.bound(e), want);
    assert_eq!(Meter::REFERENCE.bound(0.0), 0);
    assert_eq!(Meter::REFERENCE.bound(f64::NAN), 0);
    assert_eq!(upper_bound(" "), 1, "a text that is there takes a token");
}

#[test]
fn the_allowance_is_the_largest_estimate_that_fits() {
    for meter in [
        Meter::REFERENCE,
        Meter::of_ratio(&ModelRatio {
            ratio: 1.3,
            deviation: 0.02,
            samples: CALIBRATION_TRUSTED,
            ..ModelRatio::default()
        }),
    ] {
        for limit in [0u64, 1, 7, 40, 1_500, 8_000, 200_000] {
            let a = meter.allowance(limit);
            assert!(meter.fits(a, limit), "{limit}: {a}");
            assert!(
                !meter.fits(a + 0.01 * a.max(1.0), limit),
                "{limit}: {a} is not the largest"
            );
        }
    }
}

#[test]
fn a_calibration_raises_the_margin_and_never_lowers_it() {
    // A model counting 10% more than the reference: every bound grows by its ratio.
    let mut c = Calibration::default();
    for _ in 0..CALIBRATION_TRUSTED {
        c.observe("more", 1000.0, 1100.0);
    }
    let r = c.ratio("more");
    assert!((r.ratio - 1.1).abs() < 1e-9, "{r:?}");
    let m = Meter::of_ratio(&r);
    assert!((m.slope - SUM_SLOPE * 1.1).abs() < 1e-9);
    assert!(m.bound(8_000.0) > Meter::REFERENCE.bound(8_000.0));
    // Steady traffic counting less keeps the reference margin: a later section in a
    // script that traffic never held (which the estimate undercounts) must still fit.
    let mut c = Calibration::default();
    for i in 0..CALIBRATION_TRUSTED * 4 {
        c.observe("less", 1000.0, if i % 2 == 0 { 900.0 } else { 910.0 });
    }
    let r = c.ratio("less");
    assert!(r.ratio < 0.92 && r.deviation < 0.02, "{r:?}");
    assert_eq!(Meter::of_ratio(&r), Meter::REFERENCE);
}

/// Observations a neighbourhood of identical profiles needs before it is trusted.
fn trusted_after() -> u64 {
    CLASS_TRUSTED.ceil() as u64
}

/// Model "m" calibrated `times` times on a text of `counts` the model counted `ratio` times
/// its estimate.
fn observed(counts: &Counts, ratio: f64, times: u64) -> Calibration {
    let mut c = Calibration::default();
    for _ in 0..times {
        c.observe_text("m", counts, counts.estimate() * ratio);
    }
    c
}

#[test]
fn a_class_of_text_is_counted_by_its_own_correction_and_an_unseen_one_keeps_the_bound() {
    let chat =
        "sure, I can look at the deploy logs after lunch and tell you what broke\n".repeat(40);
    let cjk = "部署已经完成，所有服务运行正常。请检查日志并确认配置。\n".repeat(40);
    let (chat_c, cjk_c) = (Counts::of(&chat), Counts::of(&cjk));
    let mut c = Calibration::default();
    // Observations on chat text counting 0.95 of its estimate, give or take 1%.
    for i in 0..trusted_after() {
        let real = chat_c.estimate() * if i % 2 == 0 { 0.94 } else { 0.96 };
        c.observe_text("m", &chat_c, real);
    }
    assert_eq!(c.classes("m"), trusted_after() as usize);
    let own = c.meter_of("m", &chat_c);
    // The neighbours' ratio plus 2 mean deviations (0.01 each) or the floor, nothing for
    // distance.
    let expected = (0.95 + CLASS_DEVIATIONS * 0.01).max(0.95 * (1.0 + CLASS_FLOOR));
    assert!((own.slope - expected).abs() < 1e-6, "{own:?}");
    assert!(
        own.slope < SUM_SLOPE && own.bound(chat_c.estimate()) as f64 >= chat_c.estimate() * 0.96
    );
    // CJK was never observed: it keeps the model's meter (the reference one here).
    assert_eq!(c.meter_of("m", &cjk_c), Meter::of_ratio(&c.ratio("m")));
    assert_eq!(c.meter_of("m", &cjk_c), Meter::REFERENCE);
    // Nor does another model's traffic teach this one.
    assert_eq!(c.meter_of("other", &chat_c), Meter::REFERENCE);
    // A class the model counts more of than the reference gets a looser meter.
    for _ in 0..trusted_after() {
        c.observe_text("m", &cjk_c, cjk_c.estimate() * 1.4);
    }
    assert!(c.meter_of("m", &cjk_c).slope > SUM_SLOPE * 1.1);
    // Untrusted before the neighbourhood weighs CLASS_TRUSTED.
    let mut fresh = observed(&chat_c, 0.95, trusted_after() - 1);
    assert_eq!(fresh.meter_of("m", &chat_c), Meter::REFERENCE);
    // An estimate alone (no text) teaches no class; clearing forgets them.
    fresh.observe("n", 1000.0, 900.0);
    assert_eq!(fresh.classes("n"), 0);
    c.clear();
    assert_eq!(
        (c.classes("m"), c.meter_of("m", &chat_c)),
        (0, Meter::REFERENCE)
    );
}

#[test]
fn each_cjk_script_is_its_own_class() {
    // Japanese, Korean and Chinese count alike in the estimate (each character a CJK part),
    // and unlike in a model's tokenizer (the reference counts a Korean or traditional
    // Chinese text for a third more of its estimate than a Japanese one).
    let ja = "デプロイが完了しました。すべてのサービスは正常に動作しています。\n".repeat(40);
    let ko = "배포가완료되었습니다。모든서비스가정상적으로작동합니다。\n".repeat(40);
    let zh = "部署已经完成，所有服务运行正常。请检查日志并确认配置。\n".repeat(40);
    let [ja_c, ko_c, zh_c] = [&ja, &ko, &zh].map(|t| Counts::of(t));
    assert_eq!((ja_c.kana, ja_c.hangul), (960, 0));
    assert_eq!(
        (ko_c.kana, ko_c.hangul, zh_c.kana, zh_c.hangul),
        (0, 1_040, 0, 0)
    );
    let c = observed(&ja_c, 0.9, trusted_after() * 2);
    assert!(c.meter_of("m", &ja_c).slope < 0.95);
    // Calibrated on Japanese alone, Korean and Chinese keep the bound for every script.
    assert_eq!(c.meter_of("m", &ko_c), Meter::REFERENCE);
    assert_eq!(c.meter_of("m", &zh_c), Meter::REFERENCE);
    // Simplified and traditional Chinese write one script, the simplified with simplified
    // radicals (经, 请, 认 here): the reference counts traditional for 1.2 of its estimate,
    // simplified for 0.83. Calibrated on simplified, traditional keeps the bound.
    let tw = "部署已經完成，所有服務運行正常。請檢查日誌並確認配置。\n".repeat(40);
    let tw_c = Counts::of(&tw);
    assert_eq!(
        (zh_c.cjk, zh_c.simplified, tw_c.cjk, tw_c.simplified),
        (1_080, 120, 1_080, 0)
    );
    let c = observed(&zh_c, 0.83, trusted_after() * 2);
    assert!(c.meter_of("m", &zh_c).slope < 0.9);
    assert_eq!(c.meter_of("m", &tw_c), Meter::REFERENCE);
}

#[test]
fn a_class_that_varies_keeps_a_wider_margin_and_observations_are_bounded() {
    let text = "the build queue is long today, checking step 4 again\n".repeat(30);
    let counts = Counts::of(&text);
    let mut c = [(); 3].map(|()| Calibration::default());
    for i in 0..trusted_after() * 4 {
        let even = i % 2 == 0;
        c[0].observe_text("m", &counts, counts.estimate() * 0.9);
        c[1].observe_text(
            "m",
            &counts,
            counts.estimate() * if even { 0.85 } else { 0.95 },
        );
        c[2].observe_text(
            "m",
            &counts,
            counts.estimate() * if even { 0.7 } else { 1.1 },
        );
    }
    let [s, v, w] = c.map(|c| c.meter_of("m", &counts));
    assert!((s.slope - 0.9 * (1.0 + CLASS_FLOOR)).abs() < 1e-6, "{s:?}");
    assert!(
        (v.slope - (0.9 + CLASS_DEVIATIONS * 0.05)).abs() < 1e-6,
        "{v:?}"
    );
    // So varied that its margin passes the bound for every script: that bound is kept.
    assert_eq!(w, Meter::REFERENCE);
    // At most OBSERVATIONS_PER_MODEL are kept, the oldest forgotten: a model that now
    // counts 1.1 of what it counted 0.9 of is counted by the new ratio alone.
    let mut moved = observed(&counts, 0.9, OBSERVATIONS_PER_MODEL as u64);
    for _ in 0..OBSERVATIONS_PER_MODEL {
        moved.observe_text("m", &counts, counts.estimate() * 1.1);
    }
    assert_eq!(moved.classes("m"), OBSERVATIONS_PER_MODEL);
    let m = moved.meter_of("m", &counts);
    assert!((m.slope - 1.1 * (1.0 + CLASS_FLOOR)).abs() < 1e-6, "{m:?}");
}

#[test]
fn sections_of_one_kind_that_spread_are_counted_by_their_nearest_observations() {
    // One kind of traffic (chat with more or less code in it) whose sections spread more
    // than 0.25 from end to end: grouped as they came, classes split them and left most
    // untrusted. A section is counted by the observations nearest it.
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let code = "if (x.len() > 0) { v[i] = f(&x[..n], 2); }\n";
    let mix = |i: usize| format!("{}{}", chat.repeat(40 - 2 * i), code.repeat(2 * i));
    let counts: Vec<Counts> = (0..12).map(|i| Counts::of(&mix(i))).collect();
    let ends = (Profile::of(&counts[0]), Profile::of(&counts[11]));
    let spread = ends.0.zip(ends.1).map_or(0.0, |(a, b)| a.distance(&b));
    assert!(spread > 0.25, "{spread}");
    let mut c = Calibration::default();
    for (i, k) in counts.iter().enumerate() {
        let ratio = if i % 2 == 0 { 0.89 } else { 0.91 };
        c.observe_text("m", k, k.estimate() * ratio);
    }
    for held in [3, 6, 9] {
        let k = Counts::of(&format!(
            "{}{}",
            chat.repeat(39 - 2 * held),
            code.repeat(2 * held + 1)
        ));
        let m = c.meter_of("m", &k);
        assert!(
            m.slope < SUM_SLOPE * 0.85 && m.slope > 0.91,
            "{held}: {m:?}"
        );
        // Still above what the model counts for it, at every size a budget may take.
        for e in [200.0, 1_000.0, 8_000.0] {
            assert!(m.bound(e) as f64 >= 0.91 * e);
        }
    }
}

#[test]
fn a_mixture_of_observed_kinds_is_counted_by_the_same_mixture_of_their_ratios() {
    // Two kinds of a traffic (chat, and chat quoting JSON) that the model counts for 0.88
    // and 0.94 of their estimates, 0.2 apart; a section holding both in equal parts lies
    // 0.1 from each. A text's ratio is its parts' ratios mixed by its profile, so the
    // section's ratio is theirs mixed in its proportions.
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let json = "{\"id\": 42, \"ok\": [1, 2, 3], \"at\": \"2026-11-30\"}\n";
    let (a, b) = (
        chat.repeat(40),
        format!("{}{}", chat.repeat(32), json.repeat(3)),
    );
    let (ac, bc) = (Counts::of(&a), Counts::of(&b));
    let d = Profile::of(&ac)
        .zip(Profile::of(&bc))
        .map_or(0.0, |(p, q)| p.distance(&q));
    assert!(d > 0.17 && d < 0.23, "{d}");
    let mut c = Calibration::default();
    for _ in 0..CLASS_NEIGHBOURS / 2 {
        c.observe_text("m", &ac, ac.estimate() * 0.88);
        c.observe_text("m", &bc, bc.estimate() * 0.94);
    }
    // Both halves, in the order a thread would hold them.
    let both = Counts::of(&format!("{b}{a}"));
    let real = 0.88 * ac.estimate() + 0.94 * bc.estimate();
    let around = c
        .classes
        .get("m")
        .zip(Profile::of(&both))
        .and_then(|(k, p)| k.around(&p));
    let Some(n) = around else {
        panic!("no neighbourhood")
    };
    assert!(n.hull < 0.01, "{n:?}");
    assert!((n.ratio - real / both.estimate()).abs() < 0.005, "{n:?}");
    // Counted, it keeps above what the model counts and fills more than 90% of a budget.
    let m = c.meter_of("m", &both);
    let bound = m.bound(both.estimate()) as f64;
    assert!(
        bound >= real && real / bound > 0.9,
        "{real} of {bound}: {m:?}"
    );
}

#[test]
fn a_section_no_mixture_of_the_observations_reaches_keeps_the_bound() {
    // Chat calibrated with more or less JSON quoted in it: a section with as much JSON
    // lies among them; one with emoji, a part none of them held, lies outside however
    // near it is.
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let json = "{\"id\": 42, \"ok\": [1, 2, 3]}\n";
    let text = |json_lines: usize, emoji: usize| {
        format!(
            "{}{}{}",
            chat.repeat(40),
            json.repeat(json_lines),
            "\u{1f680}\u{2705} ".repeat(emoji)
        )
    };
    let mut c = Calibration::default();
    for i in 0..OBSERVATIONS_PER_MODEL / 4 {
        let k = Counts::of(&text(i % 8, 0));
        c.observe_text("m", &k, k.estimate() * 0.9);
    }
    let among = Counts::of(&text(5, 0));
    assert!(c.meter_of("m", &among).slope < 0.95);
    let outside = Counts::of(&text(5, 12));
    let p = Profile::of(&outside);
    let n = c.classes.get("m").zip(p).and_then(|(k, p)| k.around(&p));
    assert!(
        n.is_some_and(|n| n.weight >= CLASS_TRUSTED && n.hull > CLASS_HULL && n.nearest < 0.1),
        "{n:?}"
    );
    assert_eq!(c.meter_of("m", &outside), Meter::REFERENCE);
}

#[test]
fn the_further_the_evidence_the_wider_the_margin() {
    let near = "the build queue is long today, checking step 4 again\n".repeat(30);
    // The same chat with a JSON-ish tail: punctuation takes a larger share.
    let far = format!("{near}{}", "{\"a\": [1, 2]}, ".repeat(2));
    let (nc, fc) = (Counts::of(&near), Counts::of(&far));
    let (np, fp) = (Profile::of(&nc), Profile::of(&fc));
    let d = np.zip(fp).map_or(0.0, |(a, b)| a.distance(&b));
    // Near enough to be trusted: within CLASS_HULL of what was observed (the observations
    // are all of one profile, so the nearest mixture of them is that profile).
    assert!(d > 0.02 && d < CLASS_HULL, "{d}");
    let mut c = Calibration::default();
    // A ratio of 0.9, give or take 0.02: at the observations the floor is the margin.
    for i in 0..CLASS_NEIGHBOURS {
        let ratio = if i % 2 == 0 { 0.88 } else { 0.92 };
        c.observe_text("m", &nc, nc.estimate() * ratio);
    }
    let (at, off) = (c.meter_of("m", &nc), c.meter_of("m", &fc));
    assert!(
        (at.slope - 0.9 * (1.0 + CLASS_FLOOR)).abs() < 1e-6,
        "{at:?}"
    );
    let k = 1.0 - d / CLASS_RADIUS;
    // Off the observations, their weight falls and the margin grows with the distance.
    let around = c
        .classes
        .get("m")
        .and_then(|k| fp.and_then(|p| k.around(&p)));
    assert!(around.is_some_and(|n| (n.weight - k * CLASS_NEIGHBOURS as f64).abs() < 1e-6));
    assert!(
        (off.slope - (0.9 + CLASS_DEVIATIONS * 0.02 + 0.9 * CLASS_DISTANCE * d)).abs() < 1e-6,
        "{off:?}"
    );
    assert!(off.slope > at.slope, "{at:?} {off:?}");
}

proptest! {
    #[test]
    fn profiles_are_shares_and_their_distance_a_metric(a in "\\PC{1,200}", b in "\\PC{1,200}") {
        let (pa, pb) = (Profile::of(&Counts::of(&a)), Profile::of(&Counts::of(&b)));
        if let (Some(pa), Some(pb)) = (pa, pb) {
            prop_assert!(pa.distance(&pa).abs() < 1e-12);
            prop_assert!((pa.distance(&pb) - pb.distance(&pa)).abs() < 1e-12);
            prop_assert!(pa.distance(&pb) <= 2.0 + 1e-9);
        }
    }

    /// The columns, the ring and the sums in lanes give what the rule says, written plainly
    /// over the newest observations (single precision: within 1e-5).
    #[test]
    fn a_neighbourhood_is_what_the_newest_observations_say(
        seen in proptest::collection::vec(("[a-z ]{1,40}[{}0-9]{0,12}[é日😀]{0,3}", 0.8f64..2.0), 1..300),
        query in "[a-z ]{1,40}[{}0-9]{0,12}[é日😀]{0,3}",
    ) {
        let mut k = Classes::default();
        let mut kept = Vec::new();
        for (text, ratio) in &seen {
            if let Some(p) = Profile::of(&Counts::of(text)) {
                k.observe(p, *ratio);
                kept.push((p, *ratio));
            }
        }
        let newest = &kept[kept.len().saturating_sub(OBSERVATIONS_PER_MODEL)..];
        prop_assert_eq!(k.len(), newest.len());
        let Some(q) = Profile::of(&Counts::of(&query)) else { return Ok(()) };
        // Distances summed part by part in single precision, as the columns are; the
        // nearest CLASS_NEIGHBOURS in order (the newer first among equals), those within
        // the radius weighing.
        let mut all: Vec<(f64, f64)> = newest
            .iter()
            .rev()
            .map(|(p, r)| {
                let d = p.shares().iter().zip(q.shares()).fold(0.0f32, |a, (x, y)| a + (*x as f32 - *y as f32).abs());
                (f64::from(d), f64::from(*r as f32))
            })
            .collect();
        all.sort_by(|a, b| a.0.total_cmp(&b.0));
        let near: Vec<(f64, f64, f64)> = all
            .iter()
            .take(CLASS_NEIGHBOURS)
            .filter(|&&(d, _)| d < CLASS_RADIUS)
            .map(|&(d, r)| (d, 1.0 - d / CLASS_RADIUS, r))
            .collect();
        let weight: f64 = near.iter().map(|x| x.1).sum();
        match k.around(&q) {
            None => prop_assert!(weight < 1e-5, "{weight}"),
            Some(n) => {
                let mean = near.iter().map(|x| x.1 * x.2).sum::<f64>() / weight;
                let deviation = near.iter().map(|x| x.1 * (x.2 - mean).abs()).sum::<f64>() / weight;
                let nearest = all.first().map_or(f64::INFINITY, |x| x.0);
                prop_assert!((n.weight - weight).abs() < 1e-5 * (1.0 + weight));
                prop_assert!((n.deviation - deviation).abs() < 1e-5);
                prop_assert!((n.nearest - nearest).abs() < 1e-5);
                // The ratio is a mixture of the neighbours' ratios; the mixture lies no
                // further than the nearest neighbour.
                let (lo, hi) = near.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), x| (lo.min(x.2), hi.max(x.2)));
                prop_assert!(n.ratio >= lo - 1e-6 && n.ratio <= hi + 1e-6, "{} not in {lo}..{hi}", n.ratio);
                if n.weight >= CLASS_TRUSTED {
                    prop_assert!(n.hull >= 0.0 && n.hull <= nearest + 1e-5, "{} {nearest}", n.hull);
                } else {
                    prop_assert!((n.ratio - mean).abs() < 1e-5 && n.hull.is_infinite());
                }
                // Never below the neighbours' ratio and its floor.
                if let Some(m) = n.meter() {
                    prop_assert!(m.slope >= n.ratio * (1.0 + CLASS_FLOOR) - 1e-12);
                }
            }
        }
    }
}

/// The counting of ASCII as first written, byte by byte with branches: what the block-wise
/// `Counts::of` must agree with (characters beyond ASCII are counted by the same code).
fn reference_counts(text: &str) -> Counts {
    let mut c = Counts::default();
    let mut letters = 0u32; // current ASCII letter run
    let mut spaces = 0u32; // current space run
    let mut prev_digit = false;
    let mut prev_tab = false;
    let mut prev_other = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            let letter = b.is_ascii_alphabetic();
            if letter {
                if letters == 0 {
                    c.words += 1;
                }
                letters += 1;
                if letters > 6 {
                    c.long_letters += 1;
                }
            } else {
                letters = 0;
            }
            if b == b' ' {
                spaces += 1;
                if spaces > 1 {
                    c.extra_spaces += 1;
                }
                if spaces == 2 {
                    c.space_runs += 1;
                }
            } else {
                spaces = 0;
            }
            let digit = b.is_ascii_digit();
            if digit {
                c.digits += 1;
                if !prev_digit {
                    c.digit_runs += 1;
                }
            } else if matches!(b, b'\n' | b'\r') {
                c.line_breaks += 1;
            } else if b == b'\t' {
                c.tabs += 1;
                if !prev_tab {
                    c.tab_runs += 1;
                }
            } else if b == b'\\' {
                c.backslashes += 1;
            } else if !letter && b != b' ' && b.is_ascii_graphic() {
                c.punctuation += 1;
            }
            prev_digit = digit;
            prev_tab = b == b'\t';
            prev_other = false;
            continue;
        }
        // A multi-byte character: decode it (the text is valid UTF-8).
        let ch = text[i..].chars().next().unwrap_or('\u{FFFD}');
        i += ch.len_utf8();
        letters = 0;
        spaces = 0;
        prev_digit = false;
        prev_tab = false;
        prev_other = c.add_beyond_ascii(ch, prev_other);
    }
    c
}

#[test]
fn counts_agree_with_the_reference_across_block_edges() {
    // Runs of letters, spaces and digits ending, crossing and filling 64-byte blocks.
    for n in [1usize, 6, 7, 8, 63, 64, 65, 127, 128, 129, 200] {
        for unit in [
            "a",
            " ",
            "7",
            "ab1 ",
            "\n",
            "\t",
            "  x",
            "é",
            "\u{2502}",
            "a\u{1F600}",
        ] {
            let text = unit.repeat(n);
            assert_eq!(Counts::of(&text), reference_counts(&text), "{unit:?} x {n}");
            let framed = format!("x{text}y ");
            assert_eq!(
                Counts::of(&framed),
                reference_counts(&framed),
                "{unit:?} x {n}, framed"
            );
        }
    }
}

proptest! {
    #[test]
    fn counts_agree_with_the_reference(s in "([a-zA-Z]{0,70}[ -~\\t\\n\\r\\x00-\\x08\\x7f]{0,12}\\PC{0,2}){0,12}") {
        prop_assert_eq!(Counts::of(&s), reference_counts(&s));
    }

    #[test]
    fn counts_agree_with_the_reference_on_any_text(s in any::<String>()) {
        prop_assert_eq!(Counts::of(&s), reference_counts(&s));
    }

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

/// The process's calibration of `model` (what `by_class` reads) observing a text of
/// `counts` once per ratio of real to estimated tokens.
fn calibrate_process(model: &str, counts: &Counts, ratios: &[f64]) {
    with_calibration(|c| {
        for r in ratios {
            c.observe_text(model, counts, counts.estimate() * r);
        }
    });
}

/// Forgets what the process's calibration learnt of `model`.
fn forget(model: &str) {
    with_calibration(|c| {
        c.classes.remove(model);
        c.models.remove(model);
    });
}

/// `text_of(n)` for the most `n` (under 80) that fits `budget` by `meter`.
fn most_that_fit(meter: Meter, budget: u64, text_of: impl Fn(usize) -> String) -> String {
    let n = (0..80)
        .take_while(|&n| meter.bound(estimate(&text_of(n))) <= budget)
        .last()
        .unwrap_or(0);
    text_of(n)
}

/// A section built by a calibrated class's meter that lets in a text of another class
/// (chat lines, then Chinese ones past the 36th: what a thread's older replies may hold)
/// goes over by that class's meter; the widened meter builds what the model's meter built.
/// The meters halfway between keep more of the chat, within budget by its class's meter.
#[test]
fn a_section_that_went_over_by_its_class_keeps_the_largest_build_that_holds() {
    const MODEL: &str = "halving";
    const BUDGET: u64 = 770;
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let cjk = "部署已经完成，所有服务运行正常。请检查日志并确认配置。\n";
    let chat_c = Counts::of(&chat.repeat(30));
    calibrate_process(MODEL, &chat_c, &[0.94, 0.96].repeat(4));
    // The most lines that fit BUDGET by `meter`, chat first.
    let line = |i: usize| if i < 36 { chat } else { cjk };
    let build = |meter: Meter| -> Result<String, ()> {
        let mut text = String::new();
        for i in 0..120 {
            let before = text.len();
            text.push_str(line(i));
            if meter.bound(estimate(&text)) > BUDGET {
                text.truncate(before);
                break;
            }
        }
        Ok(text)
    };
    let lines = |t: &str| t.lines().count();
    let first = build(Meter::of_model(Some(MODEL))).unwrap_or_default();
    let own = Meter::of_text(Some(MODEL), &Counts::of(&first));
    let too_much = build(own).unwrap_or_default();
    // The class's own meter lets Chinese in, which that class does not hold.
    assert!(too_much.contains('部'), "{}", lines(&too_much));
    let kept = by_class(Some(MODEL), build, |t: &String| t.as_str()).unwrap_or_default();
    let e = estimate(&kept);
    let read = Meter::of_text(Some(MODEL), &Counts::of(&kept));
    assert!(
        lines(&kept) > lines(&first) && read.bound(e) <= BUDGET && read != Meter::REFERENCE,
        "kept {} lines (the model's meter: {}, the class's: {}), counted {} of {BUDGET}",
        lines(&kept),
        lines(&first),
        lines(&too_much),
        read.bound(e)
    );
    forget(MODEL);
}

#[test]
fn halving_narrows_the_room_from_the_side_the_build_fell() {
    let tight = Meter {
        slope: 1.0,
        spread: 0.5,
        offset: 1.0,
    };
    let mut h = Halving {
        tight,
        loose: Meter::REFERENCE,
    };
    let mid = h.next();
    assert!((mid.slope - (1.0 + SUM_SLOPE) / 2.0).abs() < 1e-12);
    assert!((mid.spread - (0.5 + SUM_SPREAD) / 2.0).abs() < 1e-12);
    h.settle(mid, true);
    assert_eq!(h.loose, mid);
    let next = h.next();
    h.settle(next, false);
    assert_eq!((h.tight, h.loose), (next, mid));
    assert!(next.slope < mid.slope && next.slope > tight.slope);
}

/// A section built by the model's meter may lie too far from the observations to be
/// counted by them (a short snapshot: its fixed header weighs more in it than in the
/// longer ones observed), though what their meter lets in lies among them: built by the
/// meter its neighbours would give, it is kept when it reads as their class and holds.
#[test]
fn a_section_too_short_to_read_as_its_class_is_built_by_its_neighbours_meter_and_kept_if_it_holds()
{
    const MODEL: &str = "probe";
    let header = "{\"channel\":{\"id\":\"C0123ABCD\",\"name\":\"deploys\"},\"anchor\":{\"ts\":\"1775736192.817058\",\"user\":\"U0456EFGH\"},\"adjacent\":[\n".repeat(8);
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let text_of = |n: usize| format!("{header}{}", chat.repeat(n));
    let observed = Counts::of(&text_of(40));
    calibrate_process(MODEL, &observed, &[0.94, 0.96].repeat(4));
    let class = Meter::of_text(Some(MODEL), &observed);
    assert_ne!(class, Meter::REFERENCE);
    let budget = class.bound(observed.estimate()) + 2;
    let build = |meter: Meter| -> Result<String, ()> { Ok(most_that_fit(meter, budget, text_of)) };
    let lines = |t: &str| t.lines().count();
    let first = build(Meter::of_model(Some(MODEL))).unwrap_or_default();
    // The short one does not read as the class observed: the bound counts it.
    assert_eq!(
        Meter::of_text(Some(MODEL), &Counts::of(&first)),
        Meter::REFERENCE
    );
    let kept = by_class(Some(MODEL), build, |t: &String| t.as_str()).unwrap_or_default();
    let read = Meter::of_text(Some(MODEL), &Counts::of(&kept));
    assert!(
        lines(&kept) > lines(&first) + 5
            && read != Meter::REFERENCE
            && read.bound(estimate(&kept)) <= budget,
        "kept {} lines, the model's meter {}; counted {} of {budget}",
        lines(&kept),
        lines(&first),
        read.bound(estimate(&kept))
    );
    forget(MODEL);
}

/// A text no observation lies near is built once; a probe that does not hold costs one
/// build and keeps the first.
#[test]
fn a_probe_is_tried_once_and_only_near_observations() {
    const MODEL: &str = "probe-once";
    let chat = "sure, I can look at the deploy logs after lunch and tell you what broke\n";
    let cjk = "部署已经完成，所有服务运行正常。请检查日志并确认配置。\n";
    let observed = Counts::of(&chat.repeat(40));
    calibrate_process(MODEL, &observed, &[0.95, 0.95]);
    let builds = std::cell::Cell::new(0);
    // Chinese, which no observation is near: built once.
    let kept = by_class(
        Some(MODEL),
        |_| -> Result<String, ()> {
            builds.set(builds.get() + 1);
            Ok(cjk.repeat(20))
        },
        |t: &String| t.as_str(),
    );
    assert_eq!((kept, builds.get()), (Ok(cjk.repeat(20)), 1));
    // Chat, too little observed to count it (two observations weigh less than
    // CLASS_TRUSTED): the probe's build lets in more chat, which the two do not count
    // either, so the first is kept after one build more.
    builds.set(0);
    let build = |meter: Meter| -> Result<String, ()> {
        builds.set(builds.get() + 1);
        Ok(most_that_fit(meter, 600, |n| chat.repeat(n)))
    };
    let first = build(Meter::of_model(Some(MODEL)));
    builds.set(0);
    let kept = by_class(Some(MODEL), build, |t: &String| t.as_str());
    assert_eq!((kept, builds.get()), (first, 2));
    forget(MODEL);
}
