//! Locks over Redis: taken, extended and released only by their holder, each with a
//! fencing token that keeps increasing; while Redis is unreachable, locks local to this
//! process (no token).

use super::*;

/// Fencing tokens this process was given, by lock name: the floor of the next one, so
/// tokens keep increasing even when Redis lost its counter.
pub(super) const FENCES_REMEMBERED: usize = 10_000;

/// Locks taken while Redis was unreachable: they exclude other holders in this process
/// only.
#[derive(Debug, Default)]
pub(super) struct LocalLocks {
    held: HashMap<String, (String, Instant)>,
}

impl Coordinator {
    fn fences(&self) -> std::sync::MutexGuard<'_, lru::LruCache<String, u64>> {
        self.fences
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn local(&self) -> std::sync::MutexGuard<'_, LocalLocks> {
        self.local
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes lock `name` for `ttl_ms` unless another holder has it. Without Redis, a
    /// process-local lock (no fencing token).
    pub async fn lock(&self, name: &str, ttl_ms: u64) -> Locked {
        let key = self.key(&["lock", name]);
        let fence_key = self.key(&["fence", name]);
        let token = token();
        let floor = self.fences().get(name).copied().unwrap_or(0);
        match self
            .run::<u64>(
                &self.lock,
                &[&key, &fence_key],
                &[token.clone(), ttl_ms.max(1).to_string(), floor.to_string()],
            )
            .await
        {
            Ok(0) => Locked::Busy,
            Ok(fence) => {
                let mut seen = self.fences();
                if seen.get(name).is_none_or(|&f| f < fence) {
                    seen.put(name.to_string(), fence);
                }
                Locked::Acquired(Held {
                    name: name.to_string(),
                    token,
                    fence: Some(fence),
                })
            }
            Err(_) => {
                let mut l = self.local();
                let now = Instant::now();
                l.held.retain(|_, (_, until)| *until > now);
                if l.held.contains_key(name) {
                    return Locked::Busy;
                }
                let until = now + Duration::from_millis(ttl_ms.max(1));
                l.held.insert(name.to_string(), (token.clone(), until));
                Locked::Acquired(Held {
                    name: name.to_string(),
                    token,
                    fence: None,
                })
            }
        }
    }

    /// Extends a lock `held` still holds; false when it was lost (expired and taken, or
    /// Redis is unreachable for a Redis lock).
    pub async fn extend(&self, held: &Held, ttl_ms: u64) -> bool {
        if held.fence.is_none() {
            let mut l = self.local();
            let now = Instant::now();
            return match l.held.get_mut(&held.name) {
                Some((t, until)) if *t == held.token && *until > now => {
                    *until = now + Duration::from_millis(ttl_ms.max(1));
                    true
                }
                _ => false,
            };
        }
        let key = self.key(&["lock", &held.name]);
        let args = [held.token.clone(), ttl_ms.max(1).to_string()];
        matches!(self.run::<i64>(&self.extend, &[&key], &args).await, Ok(1))
    }

    /// Releases a lock `held` still holds; false when it no longer did.
    pub async fn release(&self, held: &Held) -> bool {
        if held.fence.is_none() {
            let mut l = self.local();
            let mine = l
                .held
                .get(&held.name)
                .is_some_and(|(t, until)| *t == held.token && *until > Instant::now());
            if mine {
                l.held.remove(&held.name);
            }
            return mine;
        }
        let key = self.key(&["lock", &held.name]);
        matches!(
            self.run::<i64>(&self.release, &[&key], std::slice::from_ref(&held.token))
                .await,
            Ok(1)
        )
    }
}
