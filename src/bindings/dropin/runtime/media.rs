//! `planMedia`'s items: read property by property, so that a turn's media bytes are
//! looked at in place rather than copied through JSON, and the bytes of inline plans
//! set on the result the same way.

use crate::bindings::errors::throw;
use crate::bindings::js::{describe, expect_object, from_js, is_nullish, shallow_copy_except};
use crate::channel::tools::media::base64;
use crate::core::input::InputError;
use crate::dropin::runtime::media::{MediaItem, MediaMode, MediaPlan};
use napi::bindgen_prelude::*;
use napi::Env;
use serde_json::Value;

/// The items of `planMedia`, checked, with the bytes each carries (not copied).
pub(super) fn media_items(
    env: &Env,
    func: &str,
    arr: &Object,
) -> Result<(Vec<MediaItem>, Vec<Option<Uint8Array>>)> {
    let n = arr.get_array_length()?;
    let mut parsed = Vec::with_capacity(n as usize);
    let mut data: Vec<Option<Uint8Array>> = Vec::with_capacity(n as usize);
    for i in 0..n {
        let path = format!("items[{i}]");
        let it: Unknown = arr.get_element(i)?;
        expect_object(env, func, &path, &it)?;
        // SAFETY: checked to be an object by `expect_object` above.
        let src: Object = unsafe { it.cast()? };
        // Everything but `data` goes through JSON; the bytes are read in place (not
        // copied: they are only encoded if the plan is inline).
        let (rest, data_value) = shallow_copy_except(env, &src, Some("data"))?;
        let bytes = match data_value.filter(|v| !is_nullish(v)) {
            None => None,
            Some(value) if value.is_typedarray()? || value.is_buffer()? => {
                // SAFETY: the guard of this arm checked it is a typed array or a Buffer (a Uint8Array).
                Some(unsafe { value.cast::<Uint8Array>()? })
            }
            Some(value) => {
                return Err(throw(
                    env,
                    func,
                    &InputError::type_error(
                        format!("{path}.data"),
                        format!("expected a Uint8Array or Buffer, got {}", describe(&value)),
                    ),
                ))
            }
        };
        let mut item: MediaItem = from_js(env, func, &path, rest.to_unknown())?;
        item.complete(bytes.as_deref(), &path)
            .map_err(|e| throw(env, func, &e))?;
        parsed.push(item);
        data.push(bytes);
    }
    Ok((parsed, data))
}

/// Sets the bytes of each inline plan on the built result objects (base64, or the text
/// itself for a text source), which JSON never carried.
pub(super) fn set_inline_data(
    env: &Env,
    out: &Unknown,
    plans: &[MediaPlan],
    data: Vec<Option<Uint8Array>>,
) -> Result<()> {
    // Inline bytes are set on the built objects, not passed through JSON.
    // SAFETY: `to_js` of a JSON array returns an array, which is an object.
    let arr: Object = unsafe { out.cast()? };
    for (i, (p, bytes)) in plans.iter().zip(data).enumerate() {
        let (MediaMode::Inline, Some(b)) = (p.mode, bytes) else {
            continue;
        };
        let text_source = p.block.pointer("/source/type").and_then(Value::as_str) == Some("text");
        let encoded = if text_source {
            String::from_utf8_lossy(&b).into_owned()
        } else {
            base64(&b)
        };
        let plan: Object = arr.get_element(i as u32)?;
        let block: Object = plan.get_named_property("block")?;
        let mut source: Object = block.get_named_property("source")?;
        source.set_named_property("data", env.create_string(&encoded)?)?;
    }
    Ok(())
}
