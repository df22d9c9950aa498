//! The one event queue, keyed by (time, sequence), so equal times pop in the
//! order they were scheduled and every run orders events the same way.
//!
//! Most events never need a heap: arrivals, ticks and samples have one
//! pending event each, and a fixed lobby delay makes match starts come due
//! in the order they were scheduled. Such events go into FIFO *lanes*; only
//! events due in no particular order (returns, match ends) go to the heap
//! (a radix heap, `radix.rs`). `pop` takes the earliest (time, sequence) of the
//! heap's top and the lanes' heads, so the order is exactly what one heap of
//! everything would give (the test `lanes_pop_in_the_order_of_one_heap`).
//!
//! Timers that usually never fire (a ticket's abandon timer, when the ticket
//! matches first) are *cancellable*: kept in a small ordered map while they
//! are pending and removed when cancelled, instead of sitting in the heap
//! until they come due for nothing.

use super::radix::RadixHeap;
use crate::model::SimTime;
use rustc_hash::FxHashMap;
use std::collections::{BTreeMap, VecDeque};

struct Scheduled<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> Scheduled<E> {
    fn key(&self) -> (SimTime, u64) {
        (self.time, self.seq)
    }
}

/// (time, sequence) as one number for the radix heap, ordered the same way.
#[inline]
fn packed((time, seq): (SimTime, u64)) -> u128 {
    (u128::from(time.as_ms()) << 64) | u128::from(seq)
}

#[inline]
fn unpacked(key: u128) -> (SimTime, u64) {
    (SimTime::from_ms((key >> 64) as u64), key as u64)
}

/// A FIFO lane of the queue, by index (see `EventQueue::with_lanes`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Lane(pub usize);

/// A place in the order of events, taken before the event's time is known
/// (`EventQueue::reserve`), so scheduling it later orders it as if it had
/// been scheduled then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seq(u64);

/// The event heap: events ordered by time, then by the order they were scheduled, so equal times resolve the same way every run.
pub struct EventQueue<E> {
    heap: RadixHeap<E>,
    lanes: Vec<VecDeque<Scheduled<E>>>,
    /// Pending cancellable timers by (time, sequence), with their caller's key.
    timers: BTreeMap<(SimTime, u64), (u64, E)>,
    /// Each pending cancellable timer's place in `timers`, by key. Only
    /// looked up, never iterated, so its order cannot reach the output
    /// (and a fast non-cryptographic hash will do: keys are ticket ids).
    timer_keys: FxHashMap<u64, (SimTime, u64)>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue::with_lanes(0)
    }
}

impl<E> EventQueue<E> {
    /// A queue with `n` FIFO lanes, `Lane(0)` to `Lane(n - 1)`.
    pub fn with_lanes(n: usize) -> Self {
        EventQueue {
            heap: RadixHeap::default(),
            lanes: (0..n).map(|_| VecDeque::new()).collect(),
            timers: BTreeMap::new(),
            timer_keys: FxHashMap::default(),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time`, after everything already scheduled at
    /// that time.
    pub fn schedule(&mut self, time: SimTime, event: E) {
        let seq = self.reserve();
        self.schedule_reserved(seq, time, event);
    }

    /// Takes the next place in the order without scheduling anything yet.
    pub fn reserve(&mut self) -> Seq {
        let seq = self.next_seq;
        self.next_seq += 1;
        Seq(seq)
    }

    /// Schedules `event` at `time` in the place `seq` reserved.
    pub fn schedule_reserved(&mut self, seq: Seq, time: SimTime, event: E) {
        self.heap.push(packed((time, seq.0)), event);
    }

    /// Schedules `event` at `time` in `lane`. The lane stays in order by
    /// itself when its events are scheduled in the order they come due; one
    /// that would come due before the lane's last goes to the heap instead,
    /// so the order of events never depends on the caller being right.
    pub fn schedule_in(&mut self, lane: Lane, time: SimTime, event: E) {
        let seq = self.reserve().0;
        let item = Scheduled { time, seq, event };
        let lane = &mut self.lanes[lane.0];
        match lane.back() {
            Some(last) if last.time > time => self.heap.push(packed(item.key()), item.event),
            _ => lane.push_back(item),
        }
    }

    /// Schedules a timer `event` at `time` in the place `seq` reserved,
    /// cancellable by `key` until it comes due. A key names one pending
    /// timer at a time.
    pub fn schedule_cancellable(&mut self, key: u64, seq: Seq, time: SimTime, event: E) {
        let at = (time, seq.0);
        let previous = self.timer_keys.insert(key, at);
        debug_assert!(previous.is_none(), "timer key {key} already pending");
        self.timers.insert(at, (key, event));
    }

    /// Removes the pending timer of `key`, if it has not come due yet.
    pub fn cancel(&mut self, key: u64) {
        if let Some(at) = self.timer_keys.remove(&key) {
            self.timers.remove(&at);
        }
    }

    /// Removes the pending timer of `key` and says when it would have
    /// come due, so it can be scheduled again later (a ticket back from a
    /// failed ready check keeps its abandon deadline).
    pub fn take_timer(&mut self, key: u64) -> Option<SimTime> {
        let at = self.timer_keys.remove(&key)?;
        self.timers.remove(&at);
        Some(at.0)
    }

    /// The earliest event by (time, sequence), removed.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        enum Source {
            Heap,
            Lane(usize),
            Timer,
        }
        let mut best: Option<((SimTime, u64), Source)> =
            self.heap.peek_key().map(|k| (unpacked(k), Source::Heap));
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(head) = lane.front() {
                if best.as_ref().is_none_or(|(k, _)| head.key() < *k) {
                    best = Some((head.key(), Source::Lane(i)));
                }
            }
        }
        if let Some((&at, _)) = self.timers.first_key_value() {
            if best.as_ref().is_none_or(|(k, _)| at < *k) {
                best = Some((at, Source::Timer));
            }
        }
        let s = match best?.1 {
            Source::Heap => self.heap.pop().map(|(key, event)| {
                let (time, seq) = unpacked(key);
                Scheduled { time, seq, event }
            }),
            Source::Lane(i) => self.lanes[i].pop_front(),
            Source::Timer => {
                let ((time, seq), (key, event)) = self.timers.pop_first()?;
                self.timer_keys.remove(&key);
                Some(Scheduled { time, seq, event })
            }
        }?;
        Some((s.time, s.event))
    }

    /// The heap's next event, if one is there: not always the queue's next
    /// (a lane or a timer may come first), which is fine for what it is
    /// for, loading into the cache what that event will read.
    #[inline]
    pub fn peek_heap(&mut self) -> Option<&E> {
        self.heap.peek_bucketed()
    }

    /// Events scheduled and not yet taken.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>() + self.timers.len()
    }

    /// Whether no event is scheduled.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    // The oracle's order: one binary heap of everything.
    impl<E> PartialEq for Scheduled<E> {
        fn eq(&self, other: &Self) -> bool {
            self.key() == other.key()
        }
    }
    impl<E> Eq for Scheduled<E> {}
    impl<E> PartialOrd for Scheduled<E> {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl<E> Ord for Scheduled<E> {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        fn cmp(&self, other: &Self) -> Ordering {
            other.key().cmp(&self.key())
        }
    }

    #[test]
    fn earliest_first_and_fifo_among_equal_times() {
        let mut q = EventQueue::default();
        q.schedule(SimTime::from_ms(20), "late");
        q.schedule(SimTime::from_ms(10), "first-at-10");
        q.schedule(SimTime::from_ms(10), "second-at-10");
        q.schedule(SimTime::from_ms(5), "earliest");
        q.schedule(SimTime::from_ms(10), "third-at-10");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(
            order,
            [
                "earliest",
                "first-at-10",
                "second-at-10",
                "third-at-10",
                "late"
            ]
        );
    }

    #[test]
    fn a_reserved_place_orders_the_event_as_of_the_reservation() {
        let mut q = EventQueue::default();
        let early = q.reserve();
        q.schedule(SimTime::from_ms(10), "scheduled-first");
        q.schedule_reserved(early, SimTime::from_ms(10), "reserved-first");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, ["reserved-first", "scheduled-first"]);
    }

    /// The obvious queue: one heap of everything, sorted by (time, sequence).
    /// The oracle for the lanes.
    #[derive(Default)]
    struct OneHeap {
        heap: BinaryHeap<Scheduled<u32>>,
    }

    proptest! {
        /// Any mix of heap, lane and reserved scheduling, interleaved with
        /// pops, pops in the order one heap of everything gives, including
        /// lane events scheduled out of order (which fall back to the heap).
        #[test]
        fn lanes_pop_in_the_order_of_one_heap(
            ops in proptest::collection::vec((0u8..8, 0u64..50), 1..300)
        ) {
            let mut q = EventQueue::with_lanes(3);
            let mut oracle = OneHeap::default();
            let mut now = 0u64;
            let mut pending: Vec<(Seq, u64, u32)> = Vec::new();
            for (id, (op, dt)) in ops.into_iter().enumerate() {
                let id = id as u32;
                let t = SimTime::from_ms(now + dt);
                let oracle_seq = |q: &EventQueue<u32>| q.next_seq;
                match op {
                    0 => {
                        oracle.heap.push(Scheduled { time: t, seq: oracle_seq(&q), event: id });
                        q.schedule(t, id);
                    }
                    1..=3 => {
                        oracle.heap.push(Scheduled { time: t, seq: oracle_seq(&q), event: id });
                        q.schedule_in(Lane(op as usize - 1), t, id);
                    }
                    4 => {
                        let seq = q.reserve();
                        pending.push((seq, now + dt, id));
                    }
                    6 => {
                        let seq = q.reserve();
                        oracle.heap.push(Scheduled { time: t, seq: seq.0, event: id });
                        q.schedule_cancellable(u64::from(id), seq, t, id);
                    }
                    7 => {
                        // Cancel the pending timer of a recent op, if it is
                        // one: the oracle drops the same event.
                        let key = id.saturating_sub(dt as u32);
                        let before = oracle.heap.len();
                        let kept: Vec<_> = std::mem::take(&mut oracle.heap)
                            .into_iter()
                            .filter(|s| !(s.event == key && q.timer_keys.contains_key(&u64::from(key))))
                            .collect();
                        oracle.heap = kept.into();
                        q.cancel(u64::from(key));
                        prop_assert!(oracle.heap.len() + 1 >= before);
                    }
                    _ => {
                        for (seq, t, id) in pending.drain(..) {
                            oracle.heap.push(Scheduled { time: SimTime::from_ms(t), seq: seq.0, event: id });
                            q.schedule_reserved(seq, SimTime::from_ms(t), id);
                        }
                        let got = q.pop();
                        let want = oracle.heap.pop().map(|s| (s.time, s.event));
                        prop_assert_eq!(got, want);
                        if let Some((t, _)) = got {
                            now = t.as_ms();
                        }
                    }
                }
            }
            for (seq, t, id) in pending.drain(..) {
                oracle.heap.push(Scheduled { time: SimTime::from_ms(t), seq: seq.0, event: id });
                q.schedule_reserved(seq, SimTime::from_ms(t), id);
            }
            prop_assert_eq!(q.len(), oracle.heap.len());
            while let Some(want) = oracle.heap.pop() {
                prop_assert_eq!(q.pop(), Some((want.time, want.event)));
            }
            prop_assert!(q.pop().is_none());
        }
    }
}
