//! The players' records are read at random, one or two a ticket, from an
//! array of tens of megabytes: with 4 KiB pages nearly every such read also
//! misses the TLB and walks the page tables. Backed by 2 MiB pages where the
//! system allows it, the array needs a few dozen TLB entries instead of
//! thousands (`docs/performance.md`, session 15). The array is built in
//! place, so its peak memory is what it was.

/// The size of a transparent huge page on x86_64 and most aarch64 kernels.
const HUGE_PAGE: usize = 2 << 20;

/// The items collected into an allocation that the kernel is asked to back
/// with huge pages before its first page is touched (so nothing is copied,
/// and no second array ever exists). Only advice: where the kernel has
/// transparent huge pages off, or on other systems, this is `collect`.
/// Arrays under a few huge pages are collected as usual.
pub(super) fn collect_on_huge_pages<T>(items: impl ExactSizeIterator<Item = T>) -> Vec<T> {
    let n = items.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    let bytes = n * std::mem::size_of::<T>();
    if bytes >= 4 * HUGE_PAGE {
        advise_huge(out.as_mut_ptr() as usize, bytes);
    }
    out.extend(items);
    out
}

#[cfg(target_os = "linux")]
fn advise_huge(start: usize, len: usize) {
    // Only whole huge pages inside the allocation can be huge.
    let begin = start.next_multiple_of(HUGE_PAGE);
    let end = (start + len) / HUGE_PAGE * HUGE_PAGE;
    if end > begin {
        // SAFETY: the range lies inside an allocation this module owns and
        // has not handed out yet. MADV_HUGEPAGE changes only how the kernel
        // backs those pages, never their contents; an error (THP disabled)
        // leaves the ordinary pages and is deliberately ignored.
        unsafe {
            libc::madvise(begin as *mut libc::c_void, end - begin, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_start: usize, _len: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Collecting keeps every item in its place, for an array big enough
    /// to be advised and for a small one.
    #[test]
    fn collecting_on_huge_pages_keeps_the_items() {
        let big = collect_on_huge_pages((0..2_000_000u32).map(|i| u64::from(i) * 7 + 3));
        assert_eq!(big.len(), 2_000_000);
        assert!(big.iter().enumerate().all(|(i, &x)| x == i as u64 * 7 + 3));
        let small = collect_on_huge_pages(0..1000u32);
        assert_eq!(small, (0..1000).collect::<Vec<u32>>());
    }
}
