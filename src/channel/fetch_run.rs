//! A fetch run: everything one call (`buildContext`, `getMedia`, the `channel_messages`
//! tool) does between "the store lacks something" and its answer, as a state machine
//! that performs no I/O. The run says what it needs next ([`Effect`]: call a fetcher
//! function, sleep, ask the shared limiter, wait for another run's fetch); the caller
//! performs exactly that and hands back the [`Answer`]; repeat until the run is
//! [`Step::Done`]. Every decision is here or in the store: the rate limiter's slot for
//! each call, what a failure or a Retry-After does, how a page is ingested, when to plan
//! again, and which concurrent runs share one fetch.

use crate::channel::coord::SharedGrant;
use crate::channel::store::fetch::{Failure, FetchJob, FetchKind, Fetchers, Need};
use crate::channel::store::request::ContextRequest;
use crate::channel::store::{CachedMedia, ChannelStore};
use crate::channel::tools::channel_messages::MediaResult;
use crate::channel::tools::input::MessagesInput;
use serde_json::Value;
use std::collections::HashMap;

/// Rounds of fetching a build makes at most: a fetched page can show that more is
/// needed (a reply's thread, the messages around it), and each round plans again.
pub const MAX_ROUNDS: u32 = 4;

/// A run, while it lasts.
pub type RunId = u32;
/// One effect of a run, until its answer.
pub type EffectId = u32;

/// What a run needs done before it can go on.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Call the caller's fetcher function `fetch` with `request`, waiting at most
    /// `timeout_ms`; answer [`Answer::Page`], [`Answer::Bytes`] or [`Answer::Failed`].
    Call {
        id: EffectId,
        fetch: String,
        request: Value,
        timeout_ms: u64,
    },
    /// Wait `ms` milliseconds; answer [`Answer::Slept`].
    Sleep { id: EffectId, ms: u64 },
    /// Ask the limiter every worker shares for a slot for `method` on behalf of
    /// `channel`; answer [`Answer::Shared`].
    Shared {
        id: EffectId,
        method: String,
        channel: String,
    },
    /// Wait until another run's fetch of the same data ends; it is woken through
    /// [`Step::woken`], then answer [`Answer::Woken`].
    Join { id: EffectId },
}

impl Effect {
    pub fn id(&self) -> EffectId {
        match self {
            Effect::Call { id, .. }
            | Effect::Sleep { id, .. }
            | Effect::Shared { id, .. }
            | Effect::Join { id } => *id,
        }
    }
}

/// What the answer to an effect is read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// A page of messages, as JSON text.
    Page,
    /// The bytes of a file.
    Bytes,
    /// The end of a sleep.
    Slept,
    /// A wake-up: the awaited fetch has ended.
    Woken,
    /// The shared limiter's answer.
    Shared,
}

/// The answer to an effect.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// What a page fetch resolved with, as `JSON.stringify` wrote it (`None` when it
    /// could not).
    Page(Option<String>),
    /// The bytes a download resolved with.
    Bytes(Vec<u8>),
    /// A download resolved with something else, described (`a string`, `null`, ...).
    NotBytes(String),
    /// The call failed with `message`; `retry_after_ms` when it said when to retry.
    Failed {
        message: String,
        retry_after_ms: Option<f64>,
        timed_out: bool,
    },
    /// The sleep ended.
    Slept,
    /// The shared limiter's answer, given at `asked_at`; `note` is what builds say while
    /// the shared limiter cannot be reached.
    Shared {
        grant: SharedGrant,
        asked_at: u64,
        note: Option<String>,
    },
    /// The fetch this run waited for has ended.
    Woken,
}

/// What a run is for, and what it needs to finish.
#[derive(Debug)]
pub enum Goal {
    /// The context of a message; fetches are planned again after each round.
    Context(ContextRequest),
    /// One file's bytes.
    Media { artifact_id: String },
    /// A `channel_messages` tool call in `channel`.
    Messages {
        channel: String,
        input: Box<MessagesInput>,
        media: MediaResult,
        max_media_bytes: u64,
    },
}

/// Where a run stands after a start or an answer.
#[derive(Debug, Default)]
pub struct Step {
    /// What the run needs done next (empty when it is done or only waits).
    pub effects: Vec<Effect>,
    /// Set when the run has finished.
    pub done: Option<Done>,
    /// Joins (of any run) whose awaited fetch has ended: resolve them.
    pub woken: Vec<EffectId>,
    /// Retry-After pauses now in force, `(method, channel)`, to share with the other
    /// workers.
    pub pauses: Vec<(String, String)>,
}

/// The end of one fetch: the reason it failed, and for a download the bytes.
#[derive(Debug, Clone, Default)]
struct JobEnd {
    failure: Option<String>,
    media: Option<(CachedMedia, bool)>,
}

#[derive(Debug)]
enum State {
    /// Not started.
    Ready,
    /// Waiting for the local limiter's slot; then the pause is checked again.
    LocalWait,
    /// Asking the shared limiter, after this many ms of waiting on it.
    Asking(u64),
    /// Waiting for the shared limiter's slot (ms waited so far, with this wait).
    SharedWait(u64),
    Calling,
    /// Waiting for the run that owns the same fetch.
    Joined(EffectId, Option<JobEnd>),
    Done(JobEnd),
}

#[derive(Debug)]
struct Job {
    job: FetchJob,
    state: State,
    /// Pages fetched so far and the cursor of the next.
    page: u32,
    cursor: Option<String>,
    /// The store's event number when the fetch began (events after it win over pages).
    since: u64,
    calls: u32,
    owner: bool,
}

#[derive(Debug)]
struct Run {
    goal: Goal,
    fetchers: Fetchers,
    jobs: Vec<Job>,
    failures: Vec<Failure>,
    calls: u32,
    round: u32,
}

/// The live runs of one store, and which of their fetches concurrent runs share.
#[derive(Debug, Default)]
pub struct Runs {
    runs: HashMap<RunId, Run>,
    next_run: RunId,
    next_effect: EffectId,
    /// Effect id to the run and job waiting on it.
    waiting: HashMap<EffectId, (RunId, usize)>,
    /// Fetch key to the run and job making it.
    owners: HashMap<String, (RunId, usize)>,
    /// Fetch key to the joins waiting for it.
    joiners: HashMap<String, Vec<(RunId, usize)>>,
    /// Whether every call also needs a slot from the shared limiter.
    shared: bool,
}

impl Runs {
    /// Runs whose calls also ask the limiter every worker shares when `shared`.
    pub fn new(shared: bool) -> Self {
        Runs {
            shared,
            ..Runs::default()
        }
    }

    /// How many runs are live.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Whether run `run` is still going.
    pub fn is_live(&self, run: RunId) -> bool {
        self.runs.contains_key(&run)
    }

    /// Starts a run towards `goal` with the fetches `jobs` (planned by the caller of the
    /// store) and the `failures` planning met. Returns its id and first step; a step
    /// without effects is the run done.
    pub fn start(
        &mut self,
        store: &mut ChannelStore,
        goal: Goal,
        jobs: Vec<FetchJob>,
        failures: Vec<Failure>,
        fetchers: Fetchers,
        now: u64,
    ) -> (RunId, Step) {
        let id = self.next_run;
        self.next_run = self.next_run.wrapping_add(1);
        let run = Run {
            goal,
            fetchers,
            jobs: Vec::new(),
            failures,
            calls: 0,
            round: 0,
        };
        self.runs.insert(id, run);
        let mut out = Step::default();
        self.add_jobs(store, id, jobs, now, &mut out);
        self.settle(store, id, now, &mut out);
        (id, out)
    }

    /// What the answer to `effect` must be read as (`None`: no such effect is waited on).
    pub fn expects(&self, effect: EffectId) -> Option<Expect> {
        let &(run, j) = self.waiting.get(&effect)?;
        let job = self.runs.get(&run)?.jobs.get(j)?;
        Some(match job.state {
            State::Calling if job.job.kind == FetchKind::Media => Expect::Bytes,
            State::Calling => Expect::Page,
            State::Asking(..) => Expect::Shared,
            State::Joined(..) => Expect::Woken,
            _ => Expect::Slept,
        })
    }

    /// Hands the answer to `effect` of run `run` in, and returns the run's next step.
    /// An answer nobody waits for changes nothing.
    pub fn answer(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        effect: EffectId,
        answer: Answer,
        now: u64,
    ) -> Step {
        let mut out = Step::default();
        let Some((r, j)) = self.waiting.remove(&effect) else {
            return out;
        };
        if r != run {
            self.waiting.insert(effect, (r, j));
            return out;
        }
        self.on_answer(store, r, j, answer, now, &mut out);
        self.settle(store, r, now, &mut out);
        out
    }

    /// Ends run `run` early (its driver failed): its fetches end as failed with
    /// `reason`, so the runs that joined them go on.
    pub fn abort(&mut self, store: &mut ChannelStore, run: RunId, reason: &str) -> Vec<EffectId> {
        let mut out = Step::default();
        let Some(count) = self.runs.get(&run).map(|r| r.jobs.len()) else {
            return out.woken;
        };
        for j in 0..count {
            let done = matches!(self.job(run, j).map(|job| &job.state), Some(State::Done(_)));
            if !done {
                let end = JobEnd {
                    failure: Some(reason.to_string()),
                    media: None,
                };
                self.finish(store, run, j, end, &mut out);
            }
        }
        self.waiting.retain(|_, (r, _)| *r != run);
        for list in self.joiners.values_mut() {
            list.retain(|(r, _)| *r != run);
        }
        self.runs.remove(&run);
        out.woken
    }

    fn job(&mut self, run: RunId, j: usize) -> Option<&mut Job> {
        self.runs.get_mut(&run)?.jobs.get_mut(j)
    }

    fn effect_id(&mut self) -> EffectId {
        let id = self.next_effect;
        self.next_effect = self.next_effect.wrapping_add(1);
        id
    }

    /// Waits on a new effect for job `j` of `run`.
    fn wait(&mut self, run: RunId, j: usize) -> EffectId {
        let id = self.effect_id();
        self.waiting.insert(id, (run, j));
        id
    }

    fn add_jobs(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        jobs: Vec<FetchJob>,
        now: u64,
        out: &mut Step,
    ) {
        for job in jobs {
            let Some(r) = self.runs.get_mut(&run) else {
                return;
            };
            let j = r.jobs.len();
            let key = job.key.clone();
            r.jobs.push(Job {
                job,
                state: State::Ready,
                page: 0,
                cursor: None,
                since: 0,
                calls: 0,
                owner: false,
            });
            if self.owners.contains_key(&key) {
                let id = self.wait(run, j);
                if let Some(job) = self.job(run, j) {
                    job.state = State::Joined(id, None);
                }
                self.joiners.entry(key).or_default().push((run, j));
                out.effects.push(Effect::Join { id });
                continue;
            }
            self.owners.insert(key, (run, j));
            let since = store.begin_fetch();
            if let Some(job) = self.job(run, j) {
                job.owner = true;
                job.since = since;
            }
            self.acquire(store, run, j, now, out);
        }
    }

    /// Job `j` of `run` has ended: its failure joins the run's, and when it owned the
    /// fetch, the runs that joined it are woken with the same end.
    fn finish(
        &mut self,
        store: &mut ChannelStore,
        run: RunId,
        j: usize,
        end: JobEnd,
        out: &mut Step,
    ) {
        let Some(r) = self.runs.get_mut(&run) else {
            return;
        };
        let Some(job) = r.jobs.get_mut(j) else { return };
        if let (Some(reason), Some(need)) = (&end.failure, job.job.need()) {
            r.failures.push(Failure {
                need,
                reason: reason.clone(),
            });
        }
        if !job.owner {
            job.state = State::Done(end);
            return;
        }
        let key = job.job.key.clone();
        store.end_fetch();
        self.owners.remove(&key);
        for (jr, jj) in self.joiners.remove(&key).unwrap_or_default() {
            let Some(joiner) = self.job(jr, jj) else {
                continue;
            };
            if let State::Joined(id, slot) = &mut joiner.state {
                *slot = Some(end.clone());
                out.woken.push(*id);
            }
        }
        // The end (a download's bytes with it) is copied for each joiner, then moved here.
        if let Some(job) = self.job(run, j) {
            job.state = State::Done(end);
        }
    }

    /// When every fetch of `run` has ended: plans again (a build) or finishes it.
    fn settle(&mut self, store: &mut ChannelStore, run: RunId, now: u64, out: &mut Step) {
        loop {
            let Some(r) = self.runs.get_mut(&run) else {
                return;
            };
            if !r.jobs.iter().all(|j| matches!(j.state, State::Done(_))) {
                return;
            }
            // After each round of a build's fetches, plan again: what a page held may
            // show more is needed. The last round's plan only adds its failures.
            if let Goal::Context(req) = &r.goal {
                if r.round < MAX_ROUNDS {
                    r.round += 1;
                    let tried: Vec<Need> = r.jobs.iter().filter_map(|j| j.job.need()).collect();
                    let jobs = store.plan_fetches(req, &mut r.failures, &tried, r.fetchers, now);
                    if r.round < MAX_ROUNDS && !jobs.is_empty() {
                        self.add_jobs(store, run, jobs, now, out);
                        continue;
                    }
                }
            }
            let Some(r) = self.runs.remove(&run) else {
                return;
            };
            out.done = Some(done::finish_run(store, r, now));
            return;
        }
    }
}

mod done;
mod job;

pub use done::Done;
#[cfg(test)]
mod tests;
