//! Filling the layers in order: one assembly under way, phase by phase (the fixed
//! layers, the summary and memories, the recent messages, the retrieved ones, reaching
//! back with the room left), each within its share of the rest of the budget.

use super::host::{share_of, HostWindow};
use super::ladder::fill_by_ladder;
use super::plan::{fit_summary, Item, Plan};
use super::render::{data_section, section, Block, Line};
use super::tail::Tail;
use super::{
    blocks, retrieve, shows_as_memory, AssembleRequest, Assembled, FOLD_MIN_TURNS, MEMORIES_SHARE,
    RECENT_SHARE, RETRIEVED_MIN_SHARE, SUMMARY_SHARE,
};
use crate::core::text::escape::{data_text, escape};
use crate::core::tokens::{estimate, Meter};
use crate::memory::db::MemoryError;
use crate::memory::history::Zone;
use crate::memory::store::{MemoryStore, RecordKind};
use std::collections::hash_map::Entry;
use std::collections::HashSet;

/// One assembly under way: the plan, and how much of the rest of the budget it uses.
pub(super) struct Assembly<'s, 'r> {
    store: &'s MemoryStore,
    req: &'r AssembleRequest<'r>,
    plan: Plan<'r>,
    /// The budget's allowance, what it leaves after the fixed layers, and what the others
    /// use of that.
    cap: f64,
    rest: f64,
    used: f64,
    /// Shaped for a prompt cache around the caller's messages (`verbatim_share`), and
    /// whether they are all kept verbatim.
    shaped: bool,
    verbatim: bool,
    /// The seq of the last message the lane's summary covers (0: none; read when shaped).
    covered: i64,
    frame_est: f64,
    tail: Tail,
    /// The caller's blocks given (before any gave way).
    turn_count: usize,
    system_count: usize,
}

impl<'s, 'r> Assembly<'s, 'r> {
    /// The plan with its fixed layers: the blocks (the last first), the quoted reply,
    /// then the personality give way when they alone do not fit.
    pub(super) fn start(
        store: &'s MemoryStore,
        req: &'r AssembleRequest<'r>,
        meter: Meter,
    ) -> Result<Self, MemoryError> {
        let optional = |tag: &str, body: &str| {
            if body.is_empty() {
                String::new()
            } else {
                section(tag, body)
            }
        };
        let zone = Zone::utc();
        // The chat's history first, then the caller's blocks.
        let mut system_given = match req.history {
            Some(h) => blocks(&store.history_blocks(h)?),
            None => Vec::new(),
        };
        system_given.extend(blocks(req.system_blocks));
        let turn_given = blocks(req.turn_blocks);
        let (turn_count, system_count) = (turn_given.len(), system_given.len());
        let mut plan = Plan {
            req,
            meter,
            now_day: zone.day(req.now_ms),
            zone,
            policy: optional("policy", req.policy),
            personality: (!req.personality.is_empty())
                .then(|| section("personality", req.personality)),
            quoted: req
                .quoted_reply
                .map(|q| data_section("quoted_reply_context", q)),
            user: optional("user_message", req.user_message),
            summary_body: None,
            summary: None,
            memories: Vec::new(),
            memories_kept: 0,
            passages: Block::default(),
            passage_order: Vec::new(),
            recent: Block::default(),
            host: None,
            turn_blocks: turn_given,
            system_blocks: system_given,
            headings: std::cell::RefCell::default(),
        };
        let summary = store.record(req.session_id, RecordKind::ThreadSummary, req.thread_key)?;
        if let Some(messages) = req.host {
            let covered_to = summary
                .as_ref()
                .and_then(|r| r.message_range.as_ref())
                .map(|(_, to)| to.as_str());
            plan.host = Some(HostWindow::new(messages, covered_to));
        }
        let cap = meter.allowance(req.budget_tokens);
        plan.give_way_to(cap);
        let shaped = req.verbatim_share.is_some() && plan.host.is_some();
        // The seq of the last message the summary covers (0: none), for a shaped context.
        let covered = match summary.as_ref().and_then(|r| r.message_range.as_ref()) {
            Some((_, to)) if shaped => store.oldest_seq_of(req.session_id, &[to])?.unwrap_or(0),
            _ => 0,
        };
        // Every message and the fixed layers within the share, and the host's messages
        // holding the whole lane (what its summary stands for among them, and all it does
        // not): all of them, as sent. A transcript that lacks some of the lane (a host that
        // sends back what an earlier assembly kept, a new session of the lane) is past the
        // share however short.
        let verbatim = match (req.verbatim_share, plan.host.as_ref()) {
            (Some(share), Some(host)) => {
                plan.fixed_est() - host.est + host.all_est() <= share * cap
                    && (summary.is_none() || host.summary_in_view)
                    && !store.lane_has_between(
                        req.session_id,
                        req.thread_key,
                        covered,
                        &host.all_ids(),
                    )?
            }
            _ => false,
        };
        // Past the share, the whole context stays within it: what the host adds around it
        // (its system prompt, tools, the reply) has the rest of the budget.
        let limit = match req.verbatim_share {
            // The allowance of the share in real tokens (what `finish` holds the text to),
            // not the share of the allowance: a bound grows faster than its estimate.
            Some(share) if shaped && !verbatim => {
                meter.allowance(share_of(req.budget_tokens, share))
            }
            _ => cap,
        };
        let mut summary = summary.map(|r| r.body);
        if let (Some(share), false) = (req.verbatim_share, verbatim) {
            plan.step_window(meter, req.budget_tokens, share);
        }
        if let Some(host) = plan.host.as_mut().filter(|_| verbatim) {
            host.keep_all();
            // A summary of messages all in view says nothing they do not.
            if host.summary_in_view {
                summary = None;
            }
        }
        let rest = (limit - plan.fixed_est()).max(0.0);
        plan.summary_body = summary;
        Ok(Assembly {
            store,
            req,
            cap,
            shaped,
            covered,
            verbatim,
            frame_est: estimate("<retrieved_messages>\n</retrieved_messages>\n"),
            plan,
            rest,
            used: 0.0,
            tail: Tail::new(),
            turn_count,
            system_count,
        })
    }

    /// The thread summary, cut to its share; then the memories (the summaries of the
    /// `named` lanes, then the records found for the question), to theirs.
    pub(super) fn summary_and_memories(
        &mut self,
        query: &str,
        terms: &[String],
        named: &[String],
    ) -> Result<(), MemoryError> {
        let (store, req) = (self.store, self.req);
        if let Some(body) = &self.plan.summary_body {
            // Shaped for a cache, the summary's room is the budget's share, not what this
            // turn's fixed layers leave: it changes only when the summary does.
            let room = if self.shaped {
                (self.cap * SUMMARY_SHARE).min(self.rest)
            } else {
                self.rest * SUMMARY_SHARE
            };
            self.plan.summary = fit_summary(body, room);
            self.used += self.plan.summary.as_ref().map_or(0.0, |s| estimate(&s.0));
        }
        for lane in named {
            if let Some(r) = store.record(req.session_id, RecordKind::ThreadSummary, lane)? {
                let text = format!(
                    "- summary of {}:\n{}\n",
                    escape(lane),
                    escape(r.body.trim_end())
                );
                let est = estimate(&text);
                self.plan.memories.push(Item { text, est });
            }
        }
        let records = store.search_memories(
            req.session_id,
            query,
            req.thread_key,
            req.memories,
            req.budget_tokens,
        )?;
        for r in records
            .into_iter()
            .filter(|r| shows_as_memory(r, terms, req.passages_min_terms))
        {
            // A record's body is what someone wrote: kept to its item, so no line of it
            // poses as a heading.
            let text = format!("- {}\n", data_text(&r.body));
            let est = estimate(&text);
            self.plan.memories.push(Item { text, est });
        }
        self.used += self.plan.fill_memories(self.rest * MEMORIES_SHARE);
        Ok(())
    }

    /// The recent messages: the caller's (whole turns from the newest; the current turn
    /// is counted with the fixed layers) or the newest of the lane, up to their share
    /// and the cap.
    pub(super) fn recent(&mut self) -> Result<(), MemoryError> {
        // Shaped for a cache, the window is the caller's messages from its step line on
        // (`HostWindow::step_from`), as many of its newest whole turns as the rest holds.
        let room = if self.shaped {
            self.rest - self.used
        } else {
            self.rest * RECENT_SHARE
        };
        if let Some(host) = self.plan.host.as_mut() {
            let mut extended = 0.0;
            while let Some(est) = host.extend(room - extended) {
                extended += est;
            }
            self.used += extended;
            self.tail.done = true;
            return Ok(());
        }
        let cap = self.req.recent.unwrap_or(usize::MAX);
        while self.plan.recent.lines.len() < cap {
            let Some(m) = self.tail.next(self.store, self.req)? else {
                break;
            };
            let line = self.plan.line(&self.store.lines, m);
            let cost = self.plan.recent.cost(&line, self.frame_est);
            // Within the layer's share, the newest message too: one longer than that
            // waits for what retrieval leaves (`reach_back`), so a larger budget never
            // gives retrieval less.
            if self.plan.recent.est + cost > room {
                self.tail.pending.push(line.message);
                break;
            }
            self.plan.recent.add(line, cost);
        }
        self.used += self.plan.recent.est;
        Ok(())
    }

    /// The seq retrieved messages stay below: older than the oldest recent message.
    fn passages_below(&self) -> Result<i64, MemoryError> {
        Ok(match &self.plan.host {
            Some(host) => {
                let ids: Vec<&str> = host.ids().into_iter().collect();
                self.store
                    .oldest_seq_of(self.req.session_id, &ids)?
                    .unwrap_or(i64::MAX)
            }
            None => self
                .plan
                .recent
                .lines
                .keys()
                .next()
                .copied()
                .unwrap_or(i64::MAX),
        })
    }

    /// Retrieved messages: matches and their neighbours, best first, in what is left,
    /// filled by [`fill_by_ladder`] so what a smaller room holds a larger one holds too.
    pub(super) fn retrieved(
        &mut self,
        query: &str,
        terms: &[String],
        named: &[String],
    ) -> Result<(), MemoryError> {
        let (store, req) = (self.store, self.req);
        let below = self.passages_below()?;
        // A caller that asked for clear matches gets none for a question of fewer words
        // than that ("hello", "thanks"): any message holding them would do.
        let clear_enough = req.passages_min_terms <= 1 || terms.len() >= req.passages_min_terms;
        let searched = !terms.is_empty() || req.query_vector.is_some();
        let mut found = if searched && clear_enough {
            // When the recent messages hold the whole lane, nothing older is left to match.
            let lane_shown = self.plan.host.is_none() && self.tail.exhausted();
            retrieve::matches(store, req, query, terms, named, below, lane_shown)?
        } else {
            Vec::new()
        };
        let min_line = estimate("00:00 user: ok\n");
        if self.rest - self.used < min_line {
            return Ok(());
        }
        // The candidates' lines, in the order they are offered room, each read once: one
        // and a half times the room, and on until a fill that takes each one that fits
        // what is left would be full (long lines skipped leave room to shorter ones after
        // them), three times the room at most.
        let cap = req
            .passages_max_tokens
            .map_or(f64::INFINITY, |t| self.plan.meter.allowance(t));
        let room = (self.rest - self.used).min(cap);
        let (mut offered_est, mut greedy) = (0.0, 0.0);
        let mut around = retrieve::all_neighbours(store, req, &mut found, below)?;
        let mut lines: Vec<Option<Line>> = Vec::new();
        let mut offered: HashSet<i64> = HashSet::new();
        let offers = retrieve::candidates(&found, req.passages_neighbours);
        // Shaped for a cache, the retrieved part is sent anew every turn: it holds what
        // weighs near the best match, not whatever fills the room.
        let bar = match offers.first() {
            Some(&(best, _, _)) if self.shaped => best * RETRIEVED_MIN_SHARE,
            _ => f64::NEG_INFINITY,
        };
        for (_, rank, step) in offers.into_iter().take_while(|&(w, _, _)| w >= bar) {
            if offered_est > 3.0 * room || offered_est > 1.5 * room && room - greedy < min_line {
                break;
            }
            let f = &mut found[rank];
            if f.message.is_none() {
                f.message = store
                    .message_in(req.session_id, f.hit.seq)?
                    .filter(|m| m.thread_key == f.lane);
            }
            let Some(hit) = f.message.as_ref() else {
                continue;
            };
            let m = if step == 0 {
                hit.clone()
            } else {
                let (before, after) = match around.entry(rank) {
                    Entry::Occupied(e) => e.into_mut(),
                    Entry::Vacant(v) => v.insert(retrieve::neighbours(store, req, hit, below)?),
                };
                let side = if step < 0 { before } else { after };
                match side.get(usize::try_from(step.unsigned_abs()).unwrap_or(usize::MAX) - 1) {
                    Some(m) => m.clone(),
                    None => continue,
                }
            };
            if self.plan.recent.lines.contains_key(&m.seq) || !offered.insert(m.seq) {
                continue;
            }
            let line = self.plan.line(&self.store.lines, m);
            offered_est += line.est;
            if greedy + line.est <= room {
                greedy += line.est;
            }
            lines.push(Some(line));
        }
        let plan = &mut self.plan;
        let frame_est = self.frame_est;
        fill_by_ladder(lines.len(), room, min_line, |i, rung| {
            // A line taken is moved out: the ladder offers it no more.
            let Some(line) = lines[i].as_ref() else {
                return false;
            };
            let cost = plan.passages.cost(line, frame_est);
            if plan.passages.est + cost > rung {
                return false;
            }
            plan.passage_order.push(line.message.seq);
            if let Some(line) = lines[i].take() {
                plan.passages.add(line, cost);
            }
            true
        });
        self.used += plan.passages.est;
        Ok(())
    }

    /// The fold due: through what lies before the window's step line, once that holds
    /// [`FOLD_MIN_TURNS`] user turns the summary does not.
    fn fold_due(&self) -> Result<Option<String>, MemoryError> {
        let through = match (&self.plan.host, self.req.verbatim_share) {
            (Some(host), Some(_)) if !self.verbatim => host.fold_before_start(),
            _ => None,
        };
        let Some(through) = through else {
            return Ok(None);
        };
        let turns = self.store.user_turns_through(
            self.req.session_id,
            self.req.thread_key,
            self.covered,
            through,
        )?;
        Ok(turns
            .filter(|&t| t >= FOLD_MIN_TURNS)
            .map(|_| through.to_string()))
    }

    /// Room left: the caller's messages reach further back, whole turns (a retrieved
    /// message they reach is not shown twice: it gives its room back); or the recent
    /// messages do (a retrieved message they reach moves into them); then the summary
    /// and the memories get back what was cut.
    pub(super) fn reach_back(&mut self) -> Result<(), MemoryError> {
        let frame_est = self.frame_est;
        if let Some(host) = self.plan.host.as_mut() {
            loop {
                let mut grew = false;
                while let Some(est) = host.extend(self.rest - self.used) {
                    self.used += est;
                    grew = true;
                }
                if !grew {
                    break;
                }
                let kept = host.ids();
                let twice: Vec<i64> = self
                    .plan
                    .passages
                    .lines
                    .values()
                    .filter(|l| kept.contains(l.message.message_id.as_str()))
                    .map(|l| l.message.seq)
                    .collect();
                if twice.is_empty() {
                    break;
                }
                for seq in twice {
                    let before = self.plan.passages.est;
                    self.plan.passages.remove(seq, frame_est);
                    self.plan.passage_order.retain(|&s| s != seq);
                    self.used -= before - self.plan.passages.est;
                }
            }
        }
        let cap = self.req.recent.unwrap_or(usize::MAX);
        while self.plan.host.is_none() && self.plan.recent.lines.len() < cap {
            let Some(m) = self.tail.next(self.store, self.req)? else {
                break;
            };
            if let Some(line) = self.plan.passages.remove(m.seq, frame_est) {
                self.plan.passage_order.retain(|&s| s != m.seq);
                self.used -= line.est;
            }
            let line = self.plan.line(&self.store.lines, m);
            let cost = self.plan.recent.cost(&line, frame_est);
            if self.used + cost > self.rest {
                break;
            }
            self.used += cost;
            self.plan.recent.add(line, cost);
        }
        if !self.shaped {
            self.used += self.plan.grow_summary((self.rest - self.used).max(0.0));
        }
        let room = (self.rest - self.used).max(0.0) + self.plan.memories_taken();
        self.plan.fill_memories(room);
        Ok(())
    }

    /// The rendered context, within the budget on the text itself: what gives way goes
    /// in the plan's order until it fits or nothing more can.
    pub(super) fn finish(mut self) -> Result<Assembled, MemoryError> {
        let budget = self.req.budget_tokens;
        // Past the verbatim share, the text itself stays within that share of the budget.
        let hard = match self.req.verbatim_share {
            Some(share) if self.shaped && !self.verbatim => share_of(budget, share),
            _ => budget,
        };
        let (mut system, mut turn, mut tokens) = self.plan.render();
        while tokens.total > hard && self.plan.give_way(self.frame_est) {
            (system, turn, tokens) = self.plan.render();
        }
        let plan = &self.plan;
        let fold_through = self.fold_due()?;
        Ok(Assembled {
            verbatim: self.verbatim,
            fold_through,
            over_budget: tokens.total > budget,
            text: format!("{system}{turn}"),
            system,
            turn,
            keep_from: plan.host.as_ref().map_or(0, |h| h.from),
            summary_covers: plan.host.as_ref().map_or(0, |h| h.floor),
            turn_blocks_left_out: self.turn_count - plan.turn_blocks.len(),
            system_blocks_left_out: self.system_count - plan.system_blocks.len(),
            tokens,
            memories_included: plan.memories_kept,
            passages_included: plan.passages.lines.len(),
            recent_included: plan.recent.lines.len(),
        })
    }
}
