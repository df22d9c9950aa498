//! Ticket id → pool slot by index, not by search: the engine numbers
//! tickets in arrival order, so the ones waiting span a window of recent
//! ids, and a lookup there is one bounds check and one read. Policies ask
//! the pool about tickets by id on every pass (a ruleset's kept growths
//! read each ticket they took again), and walking the id B-tree for it was
//! a twentieth of `rulesets/accelbyte-5v5`.

use std::collections::BTreeMap;

/// No waiting ticket has this id.
const NONE: u32 = u32::MAX;

/// The furthest past its end the window grows for one id: an id further
/// than this (never one the engine numbers) is kept apart, so a caller's
/// sparse ids cannot make the window huge.
const MAX_GAP: u32 = 1 << 16;

/// The slots of the waiting tickets by id: ticket `base + i`'s at
/// `slots[i]` (`NONE` where no ticket with that id waits), any others in
/// `outside`. No id in `outside` falls in the window's range: the range
/// only grows over ids it takes from there.
#[derive(Default)]
pub(super) struct IdWindow {
    base: u32,
    slots: Vec<u32>,
    /// Every entry before this one is `NONE`: the oldest waiting ticket's
    /// index, about. The entries before it are dropped once they are half
    /// the window.
    head: usize,
    /// Waiting tickets whose ids the window did not have room for (none
    /// that the engine numbers).
    outside: BTreeMap<u32, u32>,
}

impl IdWindow {
    /// The slot of waiting ticket `id`.
    #[inline]
    pub(super) fn get(&self, id: u32) -> Option<u32> {
        match self.slots.get(id.wrapping_sub(self.base) as usize) {
            Some(&slot) if id >= self.base => (slot != NONE).then_some(slot),
            _ if self.outside.is_empty() => None,
            _ => self.outside.get(&id).copied(),
        }
    }

    /// Ticket `id` now waits in `slot` (in place of one of the same id
    /// that waited, if any).
    pub(super) fn insert(&mut self, id: u32, slot: u32) {
        // Where the window cannot hold it, the replaced one stays apart:
        // the new slot goes there too.
        if let Some(old) = self.outside.get_mut(&id) {
            *old = slot;
            return;
        }
        if self.slots.is_empty() {
            self.base = id;
        }
        let len = self.slots.len() as u32;
        match id.checked_sub(self.base) {
            Some(i) if i == len && id != NONE => self.slots.push(slot),
            Some(i) if i < len => {
                self.slots[i as usize] = slot;
                self.head = self.head.min(i as usize);
            }
            Some(i) if i - len <= MAX_GAP && id != NONE => {
                self.slots.resize(i as usize, NONE);
                self.slots.push(slot);
                // The range now covers ids it had no room for before.
                if !self.outside.is_empty() {
                    let end = self.base + len;
                    let taken: Vec<(u32, u32)> =
                        self.outside.range(end..id).map(|(&k, &v)| (k, v)).collect();
                    for (k, v) in taken {
                        self.outside.remove(&k);
                        self.slots[(k - self.base) as usize] = v;
                    }
                }
            }
            _ => {
                self.outside.insert(id, slot);
            }
        }
    }

    /// Ticket `id`, which waited, no longer does.
    pub(super) fn remove(&mut self, id: u32) {
        let i = id.wrapping_sub(self.base) as usize;
        if id < self.base || i >= self.slots.len() {
            self.outside.remove(&id);
            return;
        }
        self.slots[i] = NONE;
        // The oldest tickets leave first, mostly: the window follows them.
        while self.slots.get(self.head) == Some(&NONE) {
            self.head += 1;
        }
        if self.head == self.slots.len() {
            self.slots.clear();
            self.head = 0;
        } else if self.head >= 64 && self.head * 2 >= self.slots.len() {
            self.slots.drain(..self.head);
            self.base += self.head as u32;
            self.head = 0;
        }
        while self.slots.last() == Some(&NONE) {
            self.slots.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    proptest::proptest! {
        /// Against a map of every waiting id, over ids in order, out of
        /// order, far apart and near the top of the range: the window
        /// answers each id as the map does, and keeps no id apart that its
        /// range covers.
        #[test]
        fn the_window_answers_as_a_map_would(
            ops in proptest::collection::vec((0u8..4, 0u32..30, 0u8..4), 1..300),
        ) {
            let mut w = IdWindow::default();
            let mut map: BTreeMap<u32, u32> = BTreeMap::new();
            let mut next = 5u32;
            let mut slot = 0u32;
            for (op, pick, far) in ops {
                let waiting: Vec<u32> = map.keys().copied().collect();
                if op < 2 || waiting.is_empty() {
                    // Mostly the next id, as the engine numbers them; some
                    // far past it, below it, or at the top of the range.
                    let id = match far {
                        0 => next.saturating_sub(pick + 1),
                        1 => next + MAX_GAP + pick,
                        2 => u32::MAX - pick,
                        _ => next,
                    };
                    next += 1;
                    // An id that waits is replaced (`Pool::insert`).
                    slot += 1;
                    map.insert(id, slot);
                    w.insert(id, slot);
                } else {
                    let id = waiting[pick as usize % waiting.len()];
                    map.remove(&id);
                    w.remove(id);
                }
                let near = map.keys().flat_map(|&k| [k.wrapping_sub(1), k, k.saturating_add(1)]);
                let probes = (0..next + 3).chain(near);
                for probe in probes.chain([u32::MAX - 40, u32::MAX - 1, u32::MAX]) {
                    proptest::prop_assert_eq!(w.get(probe), map.get(&probe).copied(), "id {}", probe);
                }
                proptest::prop_assert!(w.slots.len() <= next as usize + 2 * MAX_GAP as usize);
                proptest::prop_assert!(w.slots[..w.head].iter().all(|&s| s == NONE));
                proptest::prop_assert!(w.outside.keys().all(|&k| k.checked_sub(w.base).is_none_or(|i| i as usize >= w.slots.len())));
            }
        }
    }

    #[test]
    fn ids_in_arrival_order_are_all_in_the_window_and_it_follows_the_oldest() {
        let mut w = IdWindow::default();
        for id in 100..110 {
            w.insert(id, id - 100);
        }
        assert_eq!(w.get(104), Some(4));
        assert_eq!(w.get(99), None);
        assert_eq!(w.get(110), None);
        w.remove(100);
        w.remove(102);
        assert_eq!((w.base, w.head, w.slots.len()), (100, 1, 10));
        w.remove(101);
        assert_eq!((w.base, w.head, w.slots.len()), (100, 3, 10));
        for id in 110..300 {
            w.insert(id, id - 100);
            w.remove(id - 7);
        }
        // The window holds the seven waiting and not many more.
        assert!(w.slots.len() <= 2 * 64 + 7, "{}", w.slots.len());
        assert_eq!(w.get(295), Some(195));
        assert_eq!(w.get(102), None);
        assert!(w.outside.is_empty());
    }
}
