//! One fetch's path through a run: the local limiter's slot (and its wait), the shared
//! limiter's (and its waits), the call, and what its answer does: a page ingested and
//! the next one asked for, bytes kept, or a failure with its note and any Retry-After.

use super::{Answer, Effect, JobEnd, RunId, Runs, State, Step};
use crate::channel::store::fetch::{FetchKind, Slot};
use crate::channel::store::ChannelStore;
use serde_json::json;

impl Runs {
    /// Asks the local limiter for the job's next call.
    pub(super) fn acquire(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        now: u64,
        out: &mut Step,
    ) {
        let Some(job) = self.job(run, j) else { return };
        let (method, channel) = (job.job.method.clone(), job.job.channel_id.clone());
        match store.acquire_slot(&method, &channel, now) {
            Slot::Refused(reason) => self.fail(store, run, j, reason, out),
            Slot::Wait(0) => self.after_local(store, run, j, 0, out),
            Slot::Wait(ms) => {
                let id = self.wait(run, j);
                if let Some(job) = self.job(run, j) {
                    job.state = State::LocalWait;
                }
                out.effects.push(Effect::Sleep { id, ms });
            }
        }
    }

    /// The local limiter allowed the call: the shared one is asked next, if there is one.
    fn after_local(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        waited: u64,
        out: &mut Step,
    ) {
        if !self.shared {
            return self.call(store, run, j, out);
        }
        let id = self.wait(run, j);
        let Some(job) = self.job(run, j) else { return };
        job.state = State::Asking(waited);
        out.effects.push(Effect::Shared {
            id,
            method: job.job.method.clone(),
            channel: job.job.channel_id.clone(),
        });
    }

    fn call(&mut self, store: &mut ChannelStore, run: RunId, j: usize, out: &mut Step) {
        let timeout_ms = store.config().fetch_timeout_ms;
        let id = self.wait(run, j);
        let Some(r) = self.runs.get_mut(&run) else {
            return;
        };
        r.calls += 1;
        let Some(job) = r.jobs.get_mut(j) else { return };
        store.count_call(&job.job.method);
        job.calls += 1;
        job.state = State::Calling;
        let mut request = job.job.request.clone();
        if job.job.kind != FetchKind::Media {
            request["limit"] = json!(job.job.page_size);
            if let Some(c) = &job.cursor {
                request["cursor"] = json!(c);
            }
        }
        out.effects.push(Effect::Call {
            id,
            fetch: job.job.fetch.clone(),
            request,
            timeout_ms,
        });
    }

    pub(super) fn on_answer(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        answer: Answer,
        now: u64,
        out: &mut Step,
    ) {
        let Some(job) = self.job(run, j) else { return };
        let (method, channel) = (job.job.method.clone(), job.job.channel_id.clone());
        match (std::mem::replace(&mut job.state, State::Ready), answer) {
            (State::LocalWait, _) => match store.paused_reason(&method, &channel, now) {
                Some(reason) => self.fail(store, run, j, reason, out),
                None => self.after_local(store, run, j, 0, out),
            },
            (State::SharedWait(waited), _) => self.after_local(store, run, j, waited, out),
            (
                State::Asking(waited),
                Answer::Shared {
                    grant,
                    asked_at,
                    note,
                },
            ) => match store.shared_verdict(&method, grant, waited, note, asked_at) {
                Slot::Refused(reason) => self.fail(store, run, j, reason, out),
                Slot::Wait(0) => self.call(store, run, j, out),
                Slot::Wait(ms) => {
                    let id = self.wait(run, j);
                    if let Some(job) = self.job(run, j) {
                        job.state = State::SharedWait(waited.saturating_add(ms));
                    }
                    out.effects.push(Effect::Sleep { id, ms });
                }
            },
            (State::Asking(_), _) => self.call(store, run, j, out),
            (
                State::Calling,
                Answer::Failed {
                    message,
                    retry_after_ms,
                    timed_out,
                },
            ) => {
                let reason =
                    store.fetch_failed(&method, &channel, &message, retry_after_ms, timed_out, now);
                if retry_after_ms.is_some() {
                    out.pauses.push((method, channel));
                }
                self.fail(store, run, j, reason, out);
            }
            (State::Calling, Answer::Bytes(bytes)) => {
                let Some(job) = self.job(run, j) else { return };
                let id = job.job.artifact_id.clone().unwrap_or_default();
                let kept = store.keep_download(&channel, &id, bytes, now);
                let end = JobEnd {
                    failure: None,
                    media: Some(kept),
                };
                self.finish(store, run, j, end, out);
            }
            (State::Calling, Answer::NotBytes(what)) => {
                let reason = store.not_bytes(&what);
                self.fail(store, run, j, reason, out);
            }
            (State::Calling, Answer::Page(json)) => self.on_page(store, run, j, json, now, out),
            (State::Calling, _) => {
                let reason = format!("{method} failed: the fetch driver answered out of turn");
                self.fail(store, run, j, reason, out);
            }
            (State::Joined(_, end), _) => {
                let end = end.unwrap_or_default();
                self.finish(store, run, j, end, out);
            }
            (state, _) => {
                // Ready or done: nothing was waited on.
                if let Some(job) = self.job(run, j) {
                    job.state = state;
                }
            }
        }
    }

    fn on_page(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        json: Option<String>,
        now: u64,
        out: &mut Step,
    ) {
        let Some(job) = self.job(run, j) else { return };
        let first = job.page == 0;
        let page = store.ingest_fetched(&job.job, json, first, Some(job.since), now);
        match page {
            Err(reason) => self.fail(store, run, j, reason, out),
            Ok(next) => {
                let Some(job) = self.job(run, j) else { return };
                job.page += 1;
                let more = next.is_some() && job.page < job.job.max_pages;
                job.cursor = next;
                if more {
                    self.acquire(store, run, j, now, out);
                } else {
                    self.finish(store, run, j, JobEnd::default(), out);
                }
            }
        }
    }

    fn fail(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        reason: String,
        out: &mut Step,
    ) {
        let end = JobEnd {
            failure: Some(reason),
            media: None,
        };
        self.finish(store, run, j, end, out);
    }
}
