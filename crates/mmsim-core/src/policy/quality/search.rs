//! `Quality`: the post's search done incrementally, proposing exactly what
//! `QualityOracle` proposes.

use super::*;
use crate::model::{SimTime, TicketId};
use crate::policy::{Explain, Policy, PoolView, Proposal, Schedule, SearchWork, Trigger};
use crate::pool::RatingKey;
use crate::teams::RoleFill;
use rand::RngCore;
use rand_pcg::Pcg64;
use smallvec::SmallVec;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The quality policy. It proposes exactly what [`QualityOracle`] proposes,
/// but keeps what does not change between passes: each ticket's party facts
/// (computed once when it joins), each seed's fills while its neighbourhood
/// is unchanged, each fill's splits, and the first pass at which a seed with
/// unchanged fills can match. A pass skips such a seed until then; the rest
/// it searches again.
pub struct Quality {
    pub(super) params: QualityParams,
    /// As `QualityOracle::salt`.
    pub(super) salt: Option<u64>,
    pub(super) entries: Vec<Option<Entry>>,
    pub(super) free: Vec<u32>,
    /// Slots in the pool's oldest-first (ticket id) order.
    pub(super) order: Vec<u32>,
    /// Tickets by (rating, id), the pool's nearest-neighbour order, with
    /// what a seed's search reads of them: contiguous, so a walk through a
    /// large pool stays in cache.
    pub(super) hot: Vec<Hot>,
    /// Tickets that joined, left or were taken since the last pass, sorted
    /// by rating at the start of a pass.
    pub(super) changes: Vec<Change>,
    /// Tickets taken this pass, sorted by rating.
    pub(super) taken_now: Vec<Change>,
    pub(super) taken_slots: Vec<u32>,
    pub(super) table: FillTable,
    pub(super) scratch: Scratch,
    pub(super) work: SearchWork,
    /// `PoolView::rerated` at the last pass.
    pub(super) rerated_seen: u64,
    /// Tests set this to search every seed whose cache was kept again and
    /// assert that the search finds the same fills.
    #[cfg(test)]
    pub(super) check_kept: bool,
    /// Tests count the seeds skipped until their next look.
    #[cfg(test)]
    pub(super) skipped: usize,
    /// Tests count the passes at which a seed dropped kept fills
    /// (`research_early = "all"`).
    #[cfg(test)]
    pub(super) dropped: usize,
}

#[derive(Default)]
pub(super) struct Scratch {
    pub(super) order: Vec<u32>,
    pub(super) added: Vec<u32>,
    pub(super) fresh: Vec<Hot>,
    pub(super) merged: Vec<Hot>,
    pub(super) removed: Vec<u32>,
    /// The (rating, id) keys of the tickets `sync` removes, sorted as
    /// `hot` is.
    pub(super) gone: Vec<(RatingKey, TicketId)>,
    /// (distance, index in `Quality::hot`) of the seed's neighbours,
    /// nearest first: an index, not a copy of the ticket, since the walk
    /// lays down forty of these for every search.
    pub(super) nb: Vec<(f64, u32)>,
    /// Neighbours sharing a language with the seed first, each part by rating.
    pub(super) language_order: Vec<usize>,
    /// The neighbours that share no language with the seed, while `walk`
    /// lays down `language_order`.
    pub(super) other_languages: Vec<usize>,
    pub(super) chosen: Vec<usize>,
    pub(super) counts: Vec<usize>,
    pub(super) caps: Vec<usize>,
    pub(super) heap: Vec<Reverse<u128>>,
    /// Emptied fill buffers of replaced searches, for the next searches.
    pub(super) spare: Vec<Vec<FillMemo>>,
    /// Where the last walk stopped in `hot`: the next index below and above.
    pub(super) frontier: (usize, usize),
    /// Whether the last search found the candidates the seed had before.
    pub(super) unchanged: bool,
}

/// A combined key and its neighbour index, ordered as the oracle's stable
/// sort orders them: the plain form of `packed_key`, kept as its test's
/// reference.
#[cfg(test)]
#[derive(Clone, Copy, Debug)]
pub(super) struct ByKey(pub(super) f64, pub(super) usize);

#[cfg(test)]
impl PartialEq for ByKey {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}
#[cfg(test)]
impl Eq for ByKey {}
#[cfg(test)]
impl PartialOrd for ByKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
#[cfg(test)]
impl Ord for ByKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// A combined key (never negative: a distance and an absolute difference
/// over positive ranges) and its neighbour index as one integer ordered as
/// `ByKey` orders them. A non-negative float's bits order as `total_cmp`
/// orders the float, so the heap compares one integer where it compared
/// two floats' total order and then the indices: the heap was the largest
/// single part of a search in a dense pool.
pub(super) fn packed_key(key: f64, index: usize) -> u128 {
    debug_assert!(key.is_sign_positive(), "combined key {key}");
    (u128::from(key.to_bits()) << 64) | index as u128
}

/// `packed_key`'s key and index again, bit for bit: the heap's values
/// carry the keys, so the walk keeps no list of them beside it.
pub(super) fn unpack_key(packed: u128) -> (f64, usize) {
    (f64::from_bits((packed >> 64) as u64), packed as u64 as usize)
}

impl Quality {
    /// The policy for these parameters (validated), with no search kept yet.
    pub fn new(params: QualityParams) -> Self {
        Quality {
            params,
            salt: None,
            entries: Vec::new(),
            free: Vec::new(),
            order: Vec::new(),
            hot: Vec::new(),
            changes: Vec::new(),
            taken_now: Vec::new(),
            taken_slots: Vec::new(),
            table: FillTable::default(),
            scratch: Scratch::default(),
            work: SearchWork::default(),
            rerated_seen: 0,
            #[cfg(test)]
            check_kept: false,
            #[cfg(test)]
            skipped: 0,
            #[cfg(test)]
            dropped: 0,
        }
    }

    pub(super) fn entry(&self, slot: u32) -> &Entry {
        self.entries[slot as usize].as_ref().expect("live slot")
    }

    /// Brings the mirror of the pool up to date: new tickets get their
    /// facts, departed ones go, and both leave their rating in `changes`.
    pub(super) fn sync(&mut self, view: &PoolView<'_>) {
        let mut order = std::mem::take(&mut self.scratch.order);
        let mut added = std::mem::take(&mut self.scratch.added);
        let mut removed = std::mem::take(&mut self.scratch.removed);
        order.clear();
        added.clear();
        removed.clear();
        // A waiting ticket's members are rated again only by a match end
        // that rated a leaver: without one since the last pass, no kept
        // ticket's record moved, and reading every member's (a cache miss
        // each in a large population) is spared.
        let reread = view.rerated_since(&mut self.rerated_seen);
        let mut i = 0;
        for t in view.pool.oldest_first() {
            while i < self.order.len() && self.entry(self.order[i]).id < t.id {
                removed.push(self.order[i]);
                i += 1;
            }
            if i < self.order.len() && self.entry(self.order[i]).id == t.id {
                if !reread || self.entry(self.order[i]).games == crate::policy::member_games(view, t) {
                    order.push(self.order[i]);
                    i += 1;
                    continue;
                }
                // A member was rated while the ticket waited (a leaver's
                // old match ended): its facts are read again, as a ticket
                // that left and joined.
                removed.push(self.order[i]);
                i += 1;
            }
            let games = crate::policy::member_games(view, t);
            let entry = Entry {
                id: t.id,
                rating: t.rating,
                enqueued: t.enqueued,
                size: t.size(),
                facts: PartyFacts {
                    wait_s: 0.0,
                    ..party_facts(&self.params, view, t)
                },
                games,
                roles: t.roles.clone(),
                taken: false,
                cache: None,
                searched_at: SimTime::ZERO,
                next_look: SimTime::ZERO,
                look_from: None,
                #[cfg(debug_assertions)]
                look_at_once: SimTime::ZERO,
            };
            self.changes.push(Change::of(&entry, true));
            let slot = match self.free.pop() {
                Some(s) => {
                    self.entries[s as usize] = Some(entry);
                    s
                }
                None => {
                    self.entries.push(Some(entry));
                    (self.entries.len() - 1) as u32
                }
            };
            order.push(slot);
            added.push(slot);
        }
        removed.extend_from_slice(&self.order[i..]);
        let mut gone = std::mem::take(&mut self.scratch.gone);
        gone.clear();
        for &slot in &removed {
            let e = self.entries[slot as usize].take().expect("live slot");
            self.changes.push(Change::of(&e, false));
            gone.push((RatingKey(e.rating), e.id));
        }
        if !added.is_empty() || !removed.is_empty() {
            let entries = &self.entries;
            // The departed found by their keys in one merge along `hot`,
            // not by reading every waiting ticket's entry (a miss each in
            // a large pool).
            gone.sort_unstable();
            let mut next = gone.iter().peekable();
            self.hot.retain(|h| {
                let key = (RatingKey(h.rating), h.id);
                while next.next_if(|g| **g < key).is_some() {}
                let departed = next.next_if(|g| **g == key).is_some();
                debug_assert_eq!(departed, entries[h.slot as usize].is_none());
                !departed
            });
            let mut fresh = std::mem::take(&mut self.scratch.fresh);
            fresh.clear();
            fresh.extend(added.iter().map(|&slot| {
                let e = entries[slot as usize].as_ref().expect("live slot");
                Hot {
                    rating: e.rating,
                    experience: e.facts.aggregate.experience,
                    skill: e.facts.aggregate.skill,
                    top_adjusted: e.facts.top_adjusted,
                    enqueued: e.enqueued,
                    id: e.id,
                    slot,
                    languages: e.facts.languages,
                    size: e.size,
                    taken: false,
                }
            }));
            let key = |h: &Hot| (RatingKey(h.rating), h.id);
            fresh.sort_by_key(key);
            // Merge the few new tickets into the sorted rest.
            let mut merged = std::mem::take(&mut self.scratch.merged);
            merged.clear();
            let mut new = fresh.iter().peekable();
            for h in &self.hot {
                while let Some(n) = new.next_if(|n| key(n) < key(h)) {
                    merged.push(*n);
                }
                merged.push(*h);
            }
            merged.extend(new);
            std::mem::swap(&mut self.hot, &mut merged);
            self.scratch.merged = merged;
            self.scratch.fresh = fresh;
        }
        // Freed only now, so no slot is reused while `hot` still holds it.
        self.free.extend_from_slice(&removed);
        std::mem::swap(&mut self.order, &mut order);
        self.scratch.order = order;
        self.scratch.added = added;
        self.scratch.removed = removed;
        self.scratch.gone = gone;
    }

    #[cfg(test)]
    pub(super) fn assert_kept_cache_is_current(&mut self, seed: u32, format: crate::policy::MatchFormat) {
        if !self.check_kept {
            return;
        }
        let ids = |c: &SeedCache| -> Vec<Vec<TicketId>> {
            c.fills.iter().map(|f| f.ids.to_vec()).collect()
        };
        let kept = self.entry(seed).cache.as_ref().expect("kept");
        let (lo, hi, prefixes, kept_ids) = (kept.lo, kept.hi, kept.prefixes, ids(kept));
        let fresh = self.search(seed, format);
        assert_eq!(kept_ids, ids(&fresh), "a kept search is stale");
        // The kept span stays, as it would have without the check.
        self.entries[seed as usize].as_mut().expect("live slot").cache = Some(SeedCache {
            lo,
            hi,
            prefixes,
            ..fresh
        });
    }

    /// Tests: a seed skipped until its `next_look` must have no candidate
    /// that passes its threshold now.
    #[cfg(test)]
    pub(super) fn assert_skipped_seed_would_not_propose(&mut self, seed: u32, view: &PoolView<'_>) {
        if !self.check_kept {
            return;
        }
        let e = self.entry(seed);
        let (next_look, waited_s) = (e.next_look, view.now.since(e.enqueued).as_secs_f64());
        let threshold = self.params.threshold_at(waited_s);
        if let Some(best) = self.best(seed, view, threshold) {
            assert!(best.0 < threshold, "seed skipped until {next_look:?} passes at {:?}", view.now);
        }
        self.skipped += 1;
    }

    /// The seed's neighbours, as `Pool::nearest` walks them (ties to the
    /// lower rating, then the older ticket), skipping taken and oversized
    /// tickets; returns the distance of the farthest, infinite when there
    /// are fewer than `neighbours` (every eligible ticket is one). The
    /// orders the fills read are laid down in the same pass: the language
    /// order (the oracle's stable sort on "shares no language": sharers,
    /// then the others, each nearest first), and each neighbour's combined
    /// key with the heap that yields them in order (the oracle's stable
    /// sort on it, produced lazily: a fill reads only the first few).
    pub(super) fn walk(&mut self, seed: u32, format: crate::policy::MatchFormat) -> f64 {
        let (r, id, seed_lang, seed_exp) = {
            let e = self.entry(seed);
            (e.rating, e.id, e.facts.languages, e.facts.aggregate.experience)
        };
        let (skill_range, experience_range) = (self.params.skill_range, self.params.experience_range);
        let k = self.params.neighbours as usize;
        let hot = &self.hot;
        let q = hot.partition_point(|h| RatingKey(h.rating) < RatingKey(r));
        let s = &mut self.scratch;
        let nb = &mut s.nb;
        nb.clear();
        s.language_order.clear();
        s.other_languages.clear();
        s.heap.clear();
        let (mut below, mut above) = (q, q);
        while nb.len() < k {
            let Some(i) = nearest_next(hot, r, &mut below, &mut above) else {
                break;
            };
            let t = hot[i];
            if t.id == id || t.taken || t.size > format.team_size {
                continue;
            }
            let (at, d) = (nb.len(), (t.rating - r).abs());
            nb.push((d, i as u32));
            if t.languages & seed_lang != 0 {
                s.language_order.push(at);
            } else {
                s.other_languages.push(at);
            }
            let key = d / skill_range + (t.experience - seed_exp).abs() / experience_range;
            s.heap.push(Reverse(packed_key(key, at)));
        }
        s.language_order.extend_from_slice(&s.other_languages);
        s.frontier = (below, above);
        if nb.len() < k {
            return f64::INFINITY;
        }
        nb.last().map_or(0.0, |n| n.0)
    }

    /// The seed's fills, as the oracle builds them, reusing the splits of
    /// fills it had before.
    pub(super) fn search(&mut self, seed: u32, format: crate::policy::MatchFormat) -> SeedCache {
        let reach = self.walk(seed, format);
        let old = self.entries[seed as usize]
            .as_mut()
            .expect("live slot")
            .cache
            .take();
        let mut old_fills = old.map(|c| c.fills).unwrap_or_default();
        let (had, mut reused) = (old_fills.len(), 0);
        let p = &self.params;
        let s = &mut self.scratch;
        let entries = &self.entries;
        let get = |slot: u32| entries[slot as usize].as_ref().expect("live slot");
        let seed_e = get(seed);
        let n = s.nb.len();
        let seed_lang = seed_e.facts.languages;
        let nb = &s.nb;
        let hot = &self.hot;
        // The neighbour at `i` in `nb`.
        let party = |i: usize| &hot[nb[i].1 as usize];
        let mut heap = BinaryHeap::from(std::mem::take(&mut s.heap));

        s.caps.clear();
        s.caps.resize(format.teams, format.team_size);
        // At most one fill per order.
        // The fills' buffer comes from earlier searches, so a search in a
        // busy pool allocates nothing.
        let mut fills: Vec<FillMemo> = s.spare.pop().unwrap_or_default();
        let mut radius = 0.0f64;
        // Each order's prefix as `Prefixes` keeps it; `None` when a prefix
        // can only be bounded by the neighbourhood's reach.
        let mut fine = Some([0.0f64; 3]);
        // The farthest neighbour any fill chose. A greedy fill leaves its
        // state as it was when it passes over a neighbour, so losing a
        // neighbour it passed over leaves it as it is: only the chosen count.
        let mut within = 0.0f64;
        // Whether a prefix reaches past the neighbourhood's edge in a way
        // `Prefixes` can still state exactly, given the tickets beyond it.
        let mut past_edge = false;
        // Non-sharers nearer than this are in the language fill's prefix.
        let mut other_languages = f64::NEG_INFINITY;
        for which in 0..3 {
            // Fill: greedy along the order, keeping the set splittable.
            let counts = &mut s.counts;
            counts.clear();
            counts.resize(format.team_size + 1, 0);
            counts[seed_e.size] += 1;
            let mut room = format.players() - seed_e.size;
            // In two teams the packing check keeps its subset sums as the
            // fill grows; other formats ask the table.
            let mut two = TwoTeamFill::new(&s.caps, seed_e.size);
            s.chosen.clear();
            let mut last = None;
            // The combined key of the last ticket the third order yielded,
            // read back from the heap's packed value.
            let mut last_key = 0.0;
            let mut at = 0;
            // A role queue's check: the set can still fill every team's composition.
            let mut role_fill = format
                .roles
                .map(|_| RoleFill::new(format.roles, format.teams, &seed_e.roles));
            while room > 0 {
                let i = match which {
                    // By rating: the neighbours' own order.
                    0 if at < n => at,
                    0 => break,
                    1 => match s.language_order.get(at) {
                        Some(&i) => i,
                        None => break,
                    },
                    _ => match heap.pop() {
                        Some(Reverse(x)) => {
                            let (key, i) = unpack_key(x);
                            debug_assert_eq!(
                                key.to_bits(),
                                (nb[i].0 / p.skill_range
                                    + (party(i).experience - seed_e.facts.aggregate.experience).abs()
                                        / p.experience_range)
                                    .to_bits(),
                                "the walk's combined key"
                            );
                            last_key = key;
                            i
                        }
                        None => break,
                    },
                };
                at += 1;
                last = Some(i);
                let size = party(i).size;
                if size > room {
                    continue;
                }
                counts[size] += 1;
                let mut grown = None;
                let ok = size == 1
                    || match &two {
                        Some(t) => {
                            grown = t.with(size);
                            debug_assert_eq!(grown.is_some(), {
                                counts[1] += room - size;
                                let ok = self.table.can_fill(counts, &s.caps);
                                counts[1] -= room - size;
                                ok
                            });
                            grown.is_some()
                        }
                        None => {
                            counts[1] += room - size;
                            let ok = self.table.can_fill(counts, &s.caps);
                            counts[1] -= room - size;
                            ok
                        }
                    };
                let ok = ok
                    && role_fill
                        .as_mut()
                        .is_none_or(|f| f.admits(&get(party(i).slot).roles));
                if ok {
                    if let Some(f) = role_fill.as_mut() {
                        f.take(&get(party(i).slot).roles);
                    }
                    if grown.is_some() {
                        two = grown;
                    }
                    s.chosen.push(i);
                    within = within.max(nb[i].0);
                    room -= size;
                } else {
                    counts[size] -= 1;
                }
            }
            // How far from the seed a change can reach into this order's
            // scanned prefix: by rating, up to its last ticket; by language,
            // the same if that ticket shares the seed's language (else every
            // sharer in the neighbourhood comes before it); by rating and
            // experience, up to `skill_range` times its combined key (the
            // key is at least distance over `skill_range`). A failed fill
            // scanned the whole neighbourhood.
            let prefix = match last {
                Some(i) if room == 0 => match which {
                    0 => nb[i].0,
                    1 if party(i).languages & seed_lang != 0 => nb[i].0,
                    1 => reach,
                    _ => last_key * p.skill_range,
                },
                _ => reach,
            };
            radius = radius.max(prefix);
            if let (Some(fine), Some(i), 0) = (&mut fine, last, room) {
                fine[which] = if which == 2 { last_key } else { nb[i].0 };
            }
            // Two prefixes stay exact past the edge: the rating-and-
            // experience one is a key, not a distance; and a language fill
            // that ran out of sharers took every sharer (any sharer is in
            // its prefix) and the non-sharers up to its last.
            let exact = match (which, last) {
                (2, Some(_)) if room == 0 => true,
                (1, Some(i)) if room == 0 && party(i).languages & seed_lang == 0 => {
                    if let Some(fine) = &mut fine {
                        fine[1] = f64::INFINITY;
                    }
                    other_languages = nb[i].0;
                    true
                }
                _ => false,
            };
            if prefix >= reach {
                if exact {
                    past_edge = true;
                } else {
                    fine = None;
                }
            }
            if room != 0 {
                continue;
            }
            // The by-rating fill chose in index order already.
            if !s.chosen.is_sorted() {
                s.chosen.sort_unstable();
            }
            // Compared in place before anything is collected: most fills
            // repeat another order's fill or the seed's last search.
            let chosen = &s.chosen;
            let same_tickets = |ids: &[TicketId]| {
                ids.len() == chosen.len() + 1
                    && ids[0] == seed_e.id
                    && ids[1..].iter().zip(chosen).all(|(&id, &i)| id == party(i).id)
            };
            if fills.iter().any(|f| same_tickets(&f.ids)) {
                continue;
            }
            // The same tickets in the same slots: a ticket read again (a
            // member rated while it waits) takes a new slot, and its old
            // fill's splits were worked out from its old facts.
            let same_slots = |slots: &[u32]| {
                slots[0] == seed && slots[1..].iter().zip(chosen).all(|(&slot, &i)| slot == party(i).slot)
            };
            if let Some(k) = old_fills
                .iter()
                .position(|f| same_tickets(&f.ids) && same_slots(&f.slots))
            {
                fills.push(old_fills.swap_remove(k));
                reused += 1;
                continue;
            }
            // Every party was taken only if solos could make up the rest
            // (and the seed alone can), so a full fill always packs.
            debug_assert!(self.table.can_fill(counts, &s.caps), "an unpackable fill");
            // `criteria`'s split-free terms, with its arithmetic, gathered
            // in one walk of the chosen parties.
            let mut ids: Inline<TicketId> = Inline::new();
            let mut slots: Inline<u32> = Inline::new();
            let mut enqueued: Inline<SimTime> = Inline::new();
            let mut tops: Inline<f64> = Inline::new();
            ids.push(seed_e.id);
            slots.push(seed);
            enqueued.push(seed_e.enqueued);
            tops.push(seed_e.facts.top_adjusted);
            let mut skill = Spread::of(seed_e.facts.aggregate.skill);
            let mut exp = Spread::of(seed_e.facts.aggregate.experience);
            let (mut common, mut largest) = (seed_e.facts.languages, seed_e.size);
            for &i in chosen {
                let t = party(i);
                ids.push(t.id);
                slots.push(t.slot);
                enqueued.push(t.enqueued);
                tops.push(t.top_adjusted);
                skill.add(t.skill);
                exp.add(t.experience);
                common &= t.languages;
                largest = largest.max(t.size);
            }
            let (skill, exp) = (skill.get(), exp.get());
            let match_common = common != 0;
            let bound = Criteria {
                balance: 1.0,
                skill: (1.0 - skill / p.skill_range).clamp(0.0, 1.0),
                experience: (1.0 - exp / p.experience_range).clamp(0.0, 1.0),
                top_player: top_player_bound(p, &tops, format.teams),
                parties: parties_bound(tops.len(), largest, format.teams, format.team_size),
                team_language: team_language_bound(
                    std::iter::once((seed_e.facts.languages, seed_e.size))
                        .chain(chosen.iter().map(|&i| (party(i).languages, party(i).size))),
                    match_common,
                    format.teams,
                    format.team_size,
                ),
                match_language: if match_common { 1.0 } else { 0.0 },
                wait: 0.0,
            };
            fills.push(FillMemo {
                ids,
                slots,
                enqueued,
                ceiling: Criteria { wait: 1.0, ..bound }.score(&p.weights),
                bound,
                splits: None,
            });
        }
        // A change farther than every prefix's reach sorts after each
        // prefix in every order, so it cannot alter a fill; and beyond the
        // neighbourhood's reach it does not enter the neighbourhood at all.
        // It may push the farthest neighbour out or pull the next one in,
        // but those lie beyond the radius too, so outside every prefix.
        s.heap = heap.into_vec();
        let radius = radius.min(reach);
        let r = seed_e.rating;
        // In a pool smaller than the neighbourhood, a prefix that took the
        // whole pool reaches infinitely far; the rounding slack is then on
        // the scale of the farthest neighbour, not infinite (an infinite
        // one would put every change in every prefix).
        let scale = if radius.is_finite() {
            radius
        } else {
            s.nb.last().map_or(0.0, |n| n.0)
        };
        let margin = 1e-6 * (1.0 + r.abs() + scale);
        // With a `research` cadence only a kept ticket's departure makes a
        // search stale (`lost_a_ticket`): the span of the chosen tickets
        // is all it reads, and the prefixes would go unread.
        let cadence = self.params.research.is_some();
        let fine = if cadence { None } else { fine };
        let mut prefixes = fine.map(|[by_rating, by_language, by_both]| Prefixes {
            by_rating,
            by_language,
            by_both,
            other_languages,
            within,
            // Counted only here: under a cadence no prefixes are kept.
            room: self.params.neighbours as usize
                - s.nb.iter().filter(|n| n.0 <= within + margin).count(),
            beyond: 0.0,
            beyond_room: usize::MAX,
            margin,
        });
        let mut span = if cadence { within } else { radius };
        if let (Some(pre), true) = (prefixes.as_mut(), past_edge) {
            // The tickets a departure would pull into the neighbourhood,
            // nearest first, as `walk` would reach them, while each sorts
            // after every prefix.
            let seed_change = Change::of(seed_e, true);
            let (hot, id) = (&self.hot, seed_e.id);
            let (mut below, mut above) = s.frontier;
            let (mut count, mut far) = (0, reach);
            let mut exhausted = false;
            while count < BEYOND {
                let Some(i) = nearest_next(hot, r, &mut below, &mut above) else {
                    exhausted = true;
                    break;
                };
                let t = hot[i];
                if t.id == id || t.taken || t.size > format.team_size {
                    continue;
                }
                let c = Change {
                    rating: t.rating,
                    experience: t.experience,
                    languages: t.languages,
                    id: t.id,
                    joined: true,
                };
                if pre.touched_by(&seed_change, &c, p) {
                    break;
                }
                count += 1;
                far = (t.rating - r).abs();
            }
            if exhausted {
                // Every ticket past the edge sorts after every prefix, so no
                // departure can pull in one that alters a fill. A ticket
                // that joins past the edge could be pulled in later: the
                // span reaches every join, so each is tested as it comes.
                pre.beyond_room = usize::MAX;
                span = f64::INFINITY;
            } else {
                // With `count` 0 the next ticket past the edge sorts into a
                // prefix, so any departure from the neighbourhood makes the
                // search stale; joins are still tested one by one.
                pre.beyond = far;
                pre.beyond_room = count;
                span = far;
            }
        }
        // Fills are distinct, so finding every old one again and no other
        // means the same candidates.
        s.unchanged = had > 0 && reused == had && fills.len() == had;
        old_fills.clear();
        s.spare.push(old_fills);
        SeedCache {
            lo: r - span - margin,
            hi: r + span + margin,
            prefixes,
            chosen: chosen_bits(&fills),
            fills,
        }
    }

    /// The split of kind `kind` of the seed's fill `fill`, computed on
    /// first need and kept with the fill.
    pub(super) fn split_for(&mut self, seed: u32, fill: usize, kind: usize, format: crate::policy::MatchFormat) {
        let salt = self.salt.expect("drawn on the first pass");
        let cache = self.entries[seed as usize]
            .as_ref()
            .expect("live slot")
            .cache
            .as_ref()
            .expect("searched seed");
        let memo = &cache.fills[fill];
        if memo.split(kind).is_some() {
            return;
        }
        let priority = team_priority(salt, kind, &memo.ids, format.teams);
        let facts: Inline<PartyFacts> = memo
            .slots
            .iter()
            .map(|&s| self.entry(s).facts.clone())
            .collect();
        let sizes: Inline<usize> = facts.iter().map(|f| f.aggregate.size).collect();
        let strengths: Inline<f64> = facts
            .iter()
            .map(|f| {
                let s = f.aggregate.adjusted_skill * f.aggregate.size as f64;
                if kind == 0 {
                    s
                } else {
                    s + 1e6
                }
            })
            .collect();
        let team_of = split_with_priority(
            &mut self.table,
            &sizes,
            &strengths,
            format.teams,
            format.team_size,
            32,
            &priority,
        );
        let team_of = if format.roles.is_some() {
            let masks: Vec<&[u8]> = memo.slots.iter().map(|&s| &self.entry(s).roles[..]).collect();
            let team_of = team_of.map(|t| t.to_vec());
            roles::role_feasible(team_of, &masks, &strengths, format.teams, format.roles)
                .map(Inline::from_vec)
        } else {
            team_of
        };
        let criteria = match &team_of {
            Some(team_of) => {
                let mut by_team: SmallVec<[Inline<usize>; 4]> =
                    (0..format.teams).map(|_| Inline::new()).collect();
                for (p, &t) in team_of.iter().enumerate() {
                    by_team[t].push(p);
                }
                criteria(&self.params, &facts, &by_team, format.team_size)
            }
            // Never scored.
            None => memo.bound,
        };
        let memo = &mut self.entries[seed as usize]
            .as_mut()
            .expect("live slot")
            .cache
            .as_mut()
            .expect("searched seed")
            .fills[fill];
        memo.splits.get_or_insert_default()[kind] = Some(SplitMemo { team_of, criteria });
    }

    /// One seed's turn in a pass: search again if its kept search is
    /// stale, then propose its best candidate if that passes the seed's
    /// threshold (taking its tickets), or set when to look next.
    pub(super) fn visit(&mut self, seed: u32, view: &PoolView<'_>, out: &mut Vec<Proposal>) {
        let format = view.format;
        self.work.seed_visits += 1;
        let (changes, taken_now) = (&self.changes, &self.taken_now);
        let e = self.entries[seed as usize].as_mut().expect("live slot");
        let facts = Change::of(e, true);
        let redo = match (self.params.research, e.cache.is_some()) {
            (_, false) => true,
            (None, true) => {
                let c = e.cache.as_mut().expect("kept search");
                stale(&facts, c, changes, taken_now, &self.params)
            }
            (Some(every), true) => {
                let c = e.cache.as_mut().expect("kept search");
                if view.now >= e.searched_at + every.0 {
                    true
                } else if self.params.research_early == EarlyResearch::Any {
                    lost_a_ticket(c, changes, taken_now)
                } else if drop_broken_fills(c, changes, taken_now) {
                    #[cfg(test)]
                    {
                        self.dropped += 1;
                    }
                    // A pending next look was worked out from the dropped
                    // fills too: look at the ones left now.
                    e.look_from = None;
                    e.next_look = view.now;
                    c.fills.is_empty()
                } else {
                    false
                }
            }
        };
        if redo {
            let cache = self.search(seed, format);
            self.work.searches += 1;
            self.work.searches_unchanged += u64::from(self.scratch.unchanged);
            let e = self.entries[seed as usize].as_mut().expect("live slot");
            e.cache = Some(cache);
            e.searched_at = view.now;
            // The last look's fills are gone, and `next_look` with them.
            e.look_from = None;
        } else {
            if let Some(at) = self.entry(seed).look_from {
                let next_look = self.next_look(seed, at);
                let e = self.entries[seed as usize].as_mut().expect("live slot");
                #[cfg(debug_assertions)]
                debug_assert_eq!(next_look, e.look_at_once, "a late next look");
                e.next_look = next_look;
                e.look_from = None;
            }
            // With a cadence a kept search may miss tickets that joined
            // since: by definition, not a stale cache.
            #[cfg(test)]
            if self.params.research.is_none() {
                self.assert_kept_cache_is_current(seed, format);
            }
            if view.now < self.entry(seed).next_look {
                #[cfg(test)]
                self.assert_skipped_seed_would_not_propose(seed, view);
                return;
            }
        }
        let e = self.entry(seed);
        let threshold = self.params.threshold_at(view.now.since(e.enqueued).as_secs_f64());
        let best = self.best(seed, view, threshold);
        let Some((_, f, kind)) = best.filter(|b| b.0 >= threshold) else {
            #[cfg(debug_assertions)]
            let at_once = self.next_look(seed, view.now);
            let e = self.entries[seed as usize].as_mut().expect("live slot");
            e.look_from = Some(view.now);
            #[cfg(debug_assertions)]
            {
                e.look_at_once = at_once;
            }
            return;
        };
        let e = self.entry(seed);
        let memo = &e.cache.as_ref().expect("searched seed").fills[f];
        let split = memo.split(kind).expect("a split");
        let team_of = split.team_of.as_ref().expect("a split");
        let mut teams = vec![Vec::new(); format.teams];
        for (p, &t) in team_of.iter().enumerate() {
            teams[t].push(memo.ids[p]);
        }
        let tickets = memo.ids.to_vec();
        let slots = memo.slots.clone();
        for s in slots {
            let e = self.entries[s as usize].as_mut().expect("live slot");
            e.taken = true;
            let at = hot_index(&self.hot, e);
            self.hot[at].taken = true;
            let c = Change::of(e, false);
            let at = self.taken_now.partition_point(|x| x.rating < c.rating);
            self.taken_now.insert(at, c);
            self.taken_slots.push(s);
        }
        out.push(Proposal {
            tickets,
            teams: Some(teams),
            rating_weight: 1.0,
        });
    }

    /// The wait criterion of a fill, with the oracle's arithmetic.
    pub(super) fn wait(&self, memo: &FillMemo, now: SimTime) -> f64 {
        (memo.mean_wait_s(now) / self.params.wait_scale.secs()).clamp(0.0, 1.0)
    }

    /// The seed's best candidate at `now` as (score, fill, kind).
    /// Candidates that cannot reach `threshold`, or cannot beat the best so
    /// far, are not split: the oracle keeps the first best, so neither can
    /// be what it proposes. `None`, or a best under the threshold, means no
    /// proposal.
    pub(super) fn best(&mut self, seed: u32, view: &PoolView<'_>, threshold: f64) -> Option<(f64, usize, usize)> {
        let format = view.format;
        let n_fills = self.entry(seed).cache.as_ref().map_or(0, |c| c.fills.len());
        let mut best: Option<(f64, usize, usize)> = None;
        for f in 0..n_fills {
            let memo = &self.entry(seed).cache.as_ref().expect("searched seed").fills[f];
            // Scores rise with the wait criterion, so its cap bounds the
            // fill without working out its wait.
            if memo.ceiling < threshold || best.is_some_and(|b| memo.ceiling <= b.0) {
                continue;
            }
            let wait = self.wait(memo, view.now);
            let bound = Criteria { wait, ..memo.bound }.score(&self.params.weights);
            if bound < threshold || best.is_some_and(|b| bound <= b.0) {
                continue;
            }
            self.split_for(seed, f, 0, format);
            self.split_for(seed, f, 1, format);
            let memo = &self.entry(seed).cache.as_ref().expect("searched seed").fills[f];
            let (Some(ma), Some(mb)) = (memo.split(0), memo.split(1)) else {
                unreachable!("both splits computed above");
            };
            let mut consider = |m: &SplitMemo, kind: usize| {
                let score = Criteria { wait, ..m.criteria }.score(&self.params.weights);
                if best.is_none_or(|b| score > b.0) {
                    best = Some((score, f, kind));
                }
            };
            if ma.team_of.is_some() {
                consider(ma, 0);
            }
            if mb.team_of.is_some() && (ma.team_of.is_none() || mb.team_of != ma.team_of) {
                consider(mb, 1);
            }
        }
        best
    }

    /// The earliest time after `now` at which one of the seed's kept
    /// candidates could pass its threshold: every candidate's score rises
    /// with its mean wait (until the wait criterion reaches 1) and the
    /// threshold falls with the seed's wait (to its floor), so the gap of
    /// each is a non-decreasing piecewise-linear function of time, solved
    /// here on its pieces. A candidate not yet split counts at its bound.
    /// Slightly early rather than late (a slack of 1e-9 on the score and a
    /// millisecond on the time): a look that finds nothing sets the next.
    pub(super) fn next_look(&self, seed: u32, now: SimTime) -> SimTime {
        let p = &self.params;
        let e = self.entry(seed);
        let Some(cache) = e.cache.as_ref() else {
            return now;
        };
        let weights = &p.weights;
        let total = weights.as_array().iter().map(|w| w.1).sum::<f64>();
        // Score per unit of the wait criterion.
        let per_wait = weights.wait / total;
        let scale = p.wait_scale.secs();
        let age = now.since(e.enqueued).as_secs_f64();
        // Seconds from now until the threshold reaches its floor.
        let to_floor = if p.threshold_fall_per_s > 0.0 {
            ((p.threshold - p.threshold_floor) / p.threshold_fall_per_s - age).max(0.0)
        } else {
            f64::INFINITY
        };
        let mut soonest = f64::INFINITY;
        for memo in &cache.fills {
            // The best this candidate can score with a wait criterion of 0.
            let at_zero = match memo.splits.as_deref() {
                None | Some([None, None]) => Criteria { wait: 0.0, ..memo.bound }.score(weights),
                Some(splits) => splits
                    .iter()
                    .flatten()
                    .filter(|m| m.team_of.is_some())
                    .map(|m| Criteria { wait: 0.0, ..m.criteria }.score(weights))
                    .fold(f64::NEG_INFINITY, f64::max),
            };
            if at_zero == f64::NEG_INFINITY {
                continue;
            }
            let mean_wait = memo.mean_wait_s(now);
            // Seconds from now until the wait criterion reaches 1.
            let to_cap = (scale - mean_wait).max(0.0);
            let gap = |dt: f64| {
                let wait = ((mean_wait + dt) / scale).clamp(0.0, 1.0);
                let threshold = p.threshold_at(age + dt);
                at_zero + per_wait * wait - threshold + 1e-9
            };
            if gap(0.0) >= 0.0 {
                return now;
            }
            let mut breaks = [to_cap, to_floor];
            breaks.sort_by(f64::total_cmp);
            let mut from = 0.0;
            for to in breaks.into_iter().chain([f64::INFINITY]) {
                if to <= from {
                    continue;
                }
                // The gap is linear on [from, to]: its slope from the rates.
                let slope = if from < to_cap { per_wait / scale } else { 0.0 }
                    + if from < to_floor { p.threshold_fall_per_s } else { 0.0 };
                // The last piece never ends: a rising gap crosses on it.
                let at_end = if to.is_finite() { gap(to) } else { f64::INFINITY };
                if slope > 0.0 && at_end >= 0.0 {
                    soonest = soonest.min(from + (-gap(from) / slope).max(0.0));
                    break;
                }
                from = to;
            }
        }
        if !soonest.is_finite() || soonest > 1e12 {
            return SimTime::MAX;
        }
        // A millisecond early, so rounding never puts the look after the
        // first pass that would accept.
        SimTime::from_ms((now.as_ms() + (soonest * 1000.0) as u64).saturating_sub(1))
    }
}

impl Policy for Quality {
    fn schedule(&self) -> Schedule {
        Schedule {
            on_join: false,
            tick: Some(self.params.tick.0),
        }
    }

    fn propose(
        &mut self,
        view: &PoolView<'_>,
        _trigger: Trigger,
        rng: &mut Pcg64,
        out: &mut Vec<Proposal>,
    ) {
        self.salt.get_or_insert_with(|| rng.next_u64());
        if view.pool.players() < view.format.players() {
            return;
        }
        let format = view.format;
        self.sync(view);
        let cadenced = self.params.research.is_some();
        // A ticket taken last pass normally left since (a departure, which
        // `sync` logged); if the engine refused its match it is still here,
        // and to the seeds that searched after it was taken it has joined.
        // Its slot is free only from the end of `sync`, so not reused yet.
        // With a cadence, such a ticket has rejoined and searches afresh,
        // as the oracle's does.
        for &s in &self.taken_slots {
            if let Some(e) = self.entries[s as usize].as_mut() {
                self.changes.push(Change::of(e, true));
                if cadenced {
                    e.cache = None;
                }
            }
        }
        self.changes.sort_by(|a, b| a.rating.total_cmp(&b.rating));
        self.taken_now.clear();
        self.taken_slots.clear();
        let order = std::mem::take(&mut self.order);
        for &seed in &order {
            let e = self.entry(seed);
            if e.taken || e.size > format.team_size {
                continue;
            }
            self.visit(seed, view, out);
        }
        self.order = order;
        self.changes.clear();
        for &s in &self.taken_slots {
            if let Some(e) = self.entries[s as usize].as_mut() {
                e.taken = false;
                let at = hot_index(&self.hot, e);
                self.hot[at].taken = false;
            }
        }
    }

    fn work(&self) -> Option<SearchWork> {
        Some(self.work)
    }

    fn explain(&self) -> Option<&dyn Explain> {
        Some(self)
    }
}

impl Explain for Quality {
    fn score_threshold(&self, waited_s: f64) -> Option<f64> {
        Some(self.params.threshold_at(waited_s))
    }

    fn match_score(&self, view: &PoolView<'_>, teams: &[Vec<TicketId>]) -> Option<f64> {
        explain::match_score(&self.params, view, teams)
    }
}
