//! What the incremental search keeps between passes, and the rules
//! (`stale`) that say when a seed's kept fills may no longer be current.

use super::*;
use crate::model::{SimTime, TicketId};
use crate::pool::RatingKey;
use smallvec::SmallVec;

/// Facts of a waiting ticket as read when it joined: they stay fixed while
/// it waits (its wait aside) unless a member is rated again meanwhile, and
/// then `sync` reads the ticket as one that left and joined.
pub(super) struct Entry {
    pub(super) id: TicketId,
    pub(super) rating: f64,
    pub(super) enqueued: SimTime,
    pub(super) size: usize,
    /// With `wait_s` 0: the wait is added per pass.
    pub(super) facts: PartyFacts,
    /// Its members' games, summed, when `facts` were read
    /// (`policy::member_games`).
    pub(super) games: u64,
    /// The members' role masks (empty without a role queue).
    pub(super) roles: crate::teams::PartyRoles,
    pub(super) taken: bool,
    pub(super) cache: Option<SeedCache>,
    /// When `cache` was searched, for the `research` cadence.
    pub(super) searched_at: SimTime,
    /// While `cache` stays current, no pass before this can accept any of
    /// its candidates (their scores rise and the threshold falls at known
    /// rates), so passes before it skip the seed.
    pub(super) next_look: SimTime,
    /// The pass of the last look that found no candidate passing, while
    /// `next_look` is not yet worked out from it: only a later pass that
    /// finds `cache` still current reads `next_look`, and most searches are
    /// stale again by then. Worked out late it is the same time, to the
    /// bit: it reads only this pass's time, the seed's wait and the kept
    /// fills with their splits, and no pass in between changes those.
    pub(super) look_from: Option<SimTime>,
    /// Debug builds: `next_look` as the look itself worked it out, which
    /// the late one must equal.
    #[cfg(debug_assertions)]
    pub(super) look_at_once: SimTime,
}

/// A ticket as a seed's search reads it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Hot {
    pub(super) rating: f64,
    pub(super) experience: f64,
    pub(super) skill: f64,
    /// The party's best member's adjusted MMR, for the top-player bound:
    /// here so a new fill does not reach into each entry for it.
    pub(super) top_adjusted: f64,
    pub(super) enqueued: SimTime,
    pub(super) id: TicketId,
    pub(super) slot: u32,
    pub(super) languages: u32,
    pub(super) size: usize,
    pub(super) taken: bool,
}

/// What a seed's search found, valid until a ticket joins, leaves or is
/// taken within `[lo, hi]` (the rating span of its neighbourhood, widened
/// past rounding) and, when `prefixes` is known, inside one of the scanned
/// prefixes: no other change can alter a fill.
pub(super) struct SeedCache {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) prefixes: Option<Prefixes>,
    pub(super) fills: Vec<FillMemo>,
    /// Bit `id % 64` set for every ticket a fill chose (`chosen_bits`): a
    /// departure whose bit is clear was not chosen, so most departures
    /// near a seed are ruled out without reading its fills.
    pub(super) chosen: u64,
}

/// The bits of `SeedCache::chosen` for `fills`.
pub(super) fn chosen_bits(fills: &[FillMemo]) -> u64 {
    fills
        .iter()
        .flat_map(|f| &f.ids[1..])
        .fold(0, |bits, id| bits | id_bit(*id))
}

fn id_bit(id: TicketId) -> u64 {
    1 << (id.0 % 64)
}

/// Whether a fill chose ticket `id` (the seed is not chosen).
pub(super) fn chose(fills: &[FillMemo], chosen: u64, id: TicketId) -> bool {
    chosen & id_bit(id) != 0 && fills.iter().any(|f| f.ids[1..].contains(&id))
}

/// How far each fill order's scanned prefix reaches. A change alters a
/// fill only if it sorts into a prefix of its order: nearer than the last
/// scanned ticket by rating; a language sharer nearer than the last scanned
/// sharer (any sharer, and non-sharers nearer than the last, when the fill
/// ran out of sharers); or a combined key below the last scanned key. In a
/// busy pool most changes in a seed's span miss all three. When a prefix
/// reaches past the neighbourhood's edge, a ticket that a departure pulls
/// in from beyond could sort into it: `beyond` says how many such pulls
/// are known to be harmless.
#[derive(Clone, Copy, Debug)]
pub(super) struct Prefixes {
    pub(super) by_rating: f64,
    /// Sharers of a language with the seed nearer than this are in the
    /// language fill's prefix; infinite when it ran out of sharers.
    pub(super) by_language: f64,
    pub(super) by_both: f64,
    /// Non-sharers nearer than this are in the language fill's prefix
    /// (when it ran out of sharers; otherwise none are).
    pub(super) other_languages: f64,
    /// Distance of the farthest neighbour a fill chose.
    pub(super) within: f64,
    /// How many more tickets the neighbourhood takes within `within`
    /// before joins there push a chosen neighbour out: more joins there
    /// than this and the search is redone, whether or not one of them
    /// sorts into a prefix.
    pub(super) room: usize,
    /// When the rating-and-experience fill's prefix reaches past the
    /// neighbourhood (in a dense pool experience, not rating, decides that
    /// order): the distance of the farthest of the tickets just beyond the
    /// neighbourhood, nearest first, that sort after every prefix, and how
    /// many they are. A ticket leaving the neighbourhood pulls the next one
    /// beyond it in; these can be pulled in without altering a fill, so up
    /// to `beyond_room` departures within `beyond` keep the search. Without
    /// such a prefix, or when every ticket past the edge was checked,
    /// `beyond_room` is unbounded and `beyond` unread.
    pub(super) beyond: f64,
    pub(super) beyond_room: usize,
    /// Rounding slack, in rating points.
    pub(super) margin: f64,
}

/// How many tickets past the neighbourhood's edge a search checks for
/// `Prefixes::beyond`: each is one change the search can absorb.
pub(super) const BEYOND: usize = 16;

/// Whether a change since the search of `seed` may have altered its fills:
/// one in its span, or (with `prefixes`) a join that sorts into a prefix,
/// the departure of a ticket a fill chose, or joins or departures that use
/// up the neighbourhood's room near the seed. Room used is kept off,
/// since joins over several passes add up.
pub(super) fn stale(
    seed: &Change,
    cache: &mut SeedCache,
    changes: &[Change],
    taken_now: &[Change],
    params: &QualityParams,
) -> bool {
    let (lo, hi) = (cache.lo, cache.hi);
    let in_span = |sorted| span(sorted, lo, hi);
    let Some(p) = cache.prefixes.as_mut() else {
        return in_span(changes).next().is_some() || in_span(taken_now).next().is_some();
    };
    let (fills, chosen) = (&cache.fills, cache.chosen);
    if in_span(changes)
        .chain(in_span(taken_now))
        .any(|c| p.alters(seed, c, fills, chosen, params))
    {
        return true;
    }
    let margin = p.margin;
    // Joins (`joined`) or departures within `reach` of the seed. Only a
    // join pushes a neighbour out, and only a departure pulls one in.
    let near = |reach: f64, joined: bool| {
        let count = |sorted: &[Change]| {
            let lo = sorted.partition_point(|c| c.rating < seed.rating - reach - margin);
            let hi = sorted.partition_point(|c| c.rating <= seed.rating + reach + margin);
            sorted[lo..hi].iter().filter(|c| c.joined == joined).count()
        };
        count(changes) + count(taken_now)
    };
    let used = near(p.within, true);
    if used > p.room {
        return true;
    }
    p.room -= used;
    if p.beyond_room != usize::MAX {
        let used = near(p.beyond, false);
        if used > p.beyond_room {
            return true;
        }
        p.beyond_room -= used;
    }
    false
}

/// Whether a ticket of one of the kept fills left or was taken since the
/// last pass: with a `research` cadence, the only change that makes a
/// search stale before its time. Every seed is visited on every pass, and
/// the fills lie within the cache's span, so the pass's departures there
/// are all it needs to look at (a walk over a few sorted changes, where
/// looking each kept ticket up in the mirror cost 5% more on `dota2-day`).
pub(super) fn lost_a_ticket(cache: &SeedCache, changes: &[Change], taken_now: &[Change]) -> bool {
    departed(cache, changes, taken_now).any(|c| chose(&cache.fills, cache.chosen, c.id))
}

/// With `research_early = "all"`: drops the kept fills that lost a ticket
/// (found as `lost_a_ticket` finds one), keeping the others in their
/// order. Whether any was dropped.
pub(super) fn drop_broken_fills(cache: &mut SeedCache, changes: &[Change], taken_now: &[Change]) -> bool {
    let lost: SmallVec<[TicketId; 8]> = departed(cache, changes, taken_now)
        .filter(|c| chose(&cache.fills, cache.chosen, c.id))
        .map(|c| c.id)
        .collect();
    if lost.is_empty() {
        return false;
    }
    cache.fills.retain(|f| !f.ids[1..].iter().any(|id| lost.contains(id)));
    cache.chosen = chosen_bits(&cache.fills);
    true
}

/// The departures since the last pass and the tickets taken earlier in
/// this one, within the cache's span.
fn departed<'a>(cache: &SeedCache, changes: &'a [Change], taken_now: &'a [Change]) -> impl Iterator<Item = &'a Change> {
    span(changes, cache.lo, cache.hi)
        .chain(span(taken_now, cache.lo, cache.hi))
        .filter(|c| !c.joined)
}

/// The changes of `sorted` (by rating) whose rating lies in `[lo, hi]`.
pub(super) fn span(sorted: &[Change], lo: f64, hi: f64) -> impl Iterator<Item = &Change> {
    let i = sorted.partition_point(|c| c.rating < lo);
    sorted[i..].iter().take_while(move |c| c.rating <= hi)
}

/// The next ticket of `hot` nearest to rating `r`, walking outward from
/// `below` (the next index down is `below - 1`) and `above` (the next up),
/// as `Pool::nearest` walks (ties to the lower rating); `None` when both
/// ends are reached.
pub(super) fn nearest_next(hot: &[Hot], r: f64, below: &mut usize, above: &mut usize) -> Option<usize> {
    let take_below = match (*below > 0, *above < hot.len()) {
        (false, false) => return None,
        (true, false) => true,
        (false, true) => false,
        (true, true) => (r - hot[*below - 1].rating) <= (hot[*above].rating - r),
    };
    if take_below {
        *below -= 1;
        Some(*below)
    } else {
        *above += 1;
        Some(*above - 1)
    }
}

/// Where a waiting ticket sits in `hot`, found by its (rating, id) key: a
/// pass takes a few tickets, while keeping each ticket's index current
/// would write to every entry after every merge.
pub(super) fn hot_index(hot: &[Hot], e: &Entry) -> usize {
    let key = (RatingKey(e.rating), e.id);
    let i = hot.partition_point(|h| (RatingKey(h.rating), h.id) < key);
    debug_assert_eq!(hot[i].id, e.id);
    i
}

/// A ticket that joined, left or was taken, as the prefixes test it.
#[derive(Clone, Copy, Debug)]
pub(super) struct Change {
    pub(super) rating: f64,
    pub(super) experience: f64,
    pub(super) languages: u32,
    pub(super) id: TicketId,
    /// Whether the ticket is now in the pool (it joined, or a refused
    /// match left it there) rather than gone (it left or was taken).
    pub(super) joined: bool,
}

impl Change {
    pub(super) fn of(e: &Entry, joined: bool) -> Self {
        Change {
            rating: e.rating,
            experience: e.facts.aggregate.experience,
            languages: e.facts.languages,
            id: e.id,
            joined,
        }
    }
}

impl Prefixes {
    /// Whether `c` may alter one of `seed`'s fills. A ticket that joined
    /// may, if it sorts into a prefix. One that left may only if a fill
    /// chose it: a greedy fill leaves its state as it was when it passes
    /// over a ticket, so losing a ticket it passed over changes none of its
    /// choices (a ticket the departure pulls in from past the edge is
    /// `beyond_room`'s concern, not this one's).
    pub(super) fn alters(
        &self,
        seed: &Change,
        c: &Change,
        fills: &[FillMemo],
        chosen: u64,
        p: &QualityParams,
    ) -> bool {
        self.touched_by(seed, c, p) && (c.joined || chose(fills, chosen, c.id))
    }

    /// Whether `c` may sort into one of the prefixes of `seed`'s fills.
    pub(super) fn touched_by(&self, seed: &Change, c: &Change, p: &QualityParams) -> bool {
        let d = (c.rating - seed.rating).abs();
        d <= self.by_rating + self.margin
            || d <= if c.languages & seed.languages != 0 {
                self.by_language
            } else {
                self.other_languages
            } + self.margin
            || d / p.skill_range + (c.experience - seed.experience).abs() / p.experience_range
                <= self.by_both + self.margin / p.skill_range
    }
}
