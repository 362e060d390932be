//! The scripts of the CJK part of [`Counts`](super::Counts): which characters it counts,
//! and of them the kana, the Hangul and the Han written with simplified radicals, which
//! the estimate counts alike and a model's tokenizer does not.

/// The CJK part of the estimate: Han, kana, Hangul, CJK punctuation and full-width forms.
pub(super) fn is_cjk(cp: u32) -> bool {
    matches!(cp,
        0x1100..=0x11FF // Hangul Jamo
        | 0x2E80..=0x9FFF // CJK radicals, punctuation, kana, Han
        | 0xAC00..=0xD7AF // Hangul syllables
        | 0xF900..=0xFAFF // CJK compatibility ideographs
        | 0xFF00..=0xFFEF // half- and full-width forms
    )
}

/// Kana: one script of [`is_cjk`]'s (Japanese writes it beside Han).
pub(super) fn is_kana(cp: u32) -> bool {
    matches!(cp, 0x3040..=0x30FF | 0x31F0..=0x31FF | 0xFF65..=0xFF9F)
}

/// Hangul: one script of [`is_cjk`]'s (Korean).
pub(super) fn is_hangul(cp: u32) -> bool {
    matches!(cp, 0x1100..=0x11FF | 0x3130..=0x318F | 0xAC00..=0xD7AF | 0xFFA0..=0xFFDC)
}

/// Han written with a simplified radical: the run of each simplified radical's characters
/// in CJK Unified Ideographs (见, 讠, 贝, 车, 纟, 钅, 门, 韦, 页, 风, 饣, 马, 鱼, 鸟, 齿).
pub(super) fn is_simplified(cp: u32) -> bool {
    matches!(cp,
        0x7E9F..=0x7F35 // 纟
        | 0x89C1..=0x89D1 // 见
        | 0x8BA0..=0x8C36 // 讠
        | 0x8D1D..=0x8D63 // 贝
        | 0x8F66..=0x8F9A // 车
        | 0x9485..=0x9576 // 钅
        | 0x95E8..=0x961B // 门
        | 0x97E6..=0x97EC // 韦
        | 0x9875..=0x98A7 // 页
        | 0x98CE..=0x98DA // 风
        | 0x9963..=0x9995 // 饣
        | 0x9A6C..=0x9AA7 // 马
        | 0x9C7C..=0x9CE4 // 鱼
        | 0x9E1F..=0x9E74 // 鸟
        | 0x9F7F..=0x9F8C // 齿
    )
}
